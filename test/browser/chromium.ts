/**
 * What the browser tests share: Debian's Chromium (or CHROMIUM_PATH) launched headless by
 * playwright-core, the rule that its absence skips the tests except under CI=true, screenshots
 * under test/artifacts/ (not committed), and axe-core run inside the page: its own axe.min.js
 * evaluated in the page, the result's serious and critical violations returned for assertion.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const ARTIFACTS = resolve("test/artifacts");
export const haveChromium = existsSync(CHROMIUM);
const inCi = process.env.CI === "true";
export const skipBrowser = !haveChromium && !inCi;
if (skipBrowser)
  console.warn(
    `[browser test skipped] ${CHROMIUM} was not found. Install it (apt-get install -y chromium) to run the dashboard browser tests; CI=true makes its absence a failure.`,
  );

export const UI_WAIT = { timeout: 20_000 };

export async function launchChromium(): Promise<Browser> {
  if (!haveChromium)
    throw new Error(
      `CI=true but ${CHROMIUM} is missing: the browser tests must run in CI. Install Chromium (apt-get install -y chromium; .ci/run does this).`,
    );
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}

export interface BrowserHost {
  host: NodeHost;
  browser: Browser;
  /** The host's database file, for tests that look at what was stored. */
  dbPath: string;
  close(): Promise<void>;
}

/**
 * The real Node host on a free port over a fresh file database (with `vars` on top), and
 * Chromium; `close` ends both and removes the database.
 */
export async function startBrowserHost(adminToken: string, vars: Record<string, string> = {}): Promise<BrowserHost> {
  const dir = mkdtempSync(join(tmpdir(), "fleetwarden-browser-"));
  const dbPath = join(dir, "fleetwarden.db");
  const host = await startNodeHost({ PORT: "0", DATABASE_URL: `file:${dbPath}`, ADMIN_TOKEN: adminToken, ...vars }, { log: silentLogger });
  const browser = await launchChromium().catch(async (err: unknown) => {
    await host.stop();
    throw err;
  });
  return {
    host,
    browser,
    dbPath,
    async close() {
      await browser.close();
      await host.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const screenshot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Runs axe-core on the page as it is now; returns the serious and critical violations. */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the page's CSP forbids inline scripts, and must.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            context: Document,
          ) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document);
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * Presses Tab through the page (stopping once every control was reached, or after one press per
 * focusable element) and returns the form controls (visible, enabled, not hidden inputs) that
 * never received focus: every form must be usable from the keyboard.
 */
export async function controlsUnreachableByTab(page: Page): Promise<string[]> {
  const count = await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
    const w = window as unknown as { focused: Set<Element> };
    w.focused = new Set();
    document.addEventListener("focusin", (e) => w.focused.add(e.target as Element));
    return document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea, [tabindex], summary").length;
  });
  const unreached = () =>
    page.evaluate(() => {
      const focused = (window as unknown as { focused: Set<Element> }).focused;
      return [...document.querySelectorAll("form input:not([type=hidden]), form select, form textarea, form button")]
        .filter(
          (el) => !(el as HTMLInputElement).disabled && (el as HTMLElement).offsetParent !== null && !el.closest("details:not([open])"),
        )
        .filter((el) => !focused.has(el))
        .map(
          (el) =>
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} in form ${(el.closest("form") as HTMLFormElement).getAttribute("action")}`,
        );
    });
  for (let i = 1; i <= count + 2; i++) {
    await page.keyboard.press("Tab");
    if (i % 5 === 0 && (await unreached()).length === 0) return [];
  }
  return unreached();
}
