/**
 * Roles and narrow screens in a real browser (playwright-core, Debian's Chromium) against the
 * real Node host: a viewer, an operator and an admin each sign in and see only the controls their
 * role may use (viewer: nothing that writes; operator: no admin forms; the Operators link only
 * for admins); a viewer's refused post is a dashboard page, not JSON; every page passes axe (no
 * serious or critical violations) and, at a 390 px wide viewport, scrolls no wider than 390 px.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodeHost } from "../../functions/host/node-host.ts";
import { remember } from "../../agent/memory.ts";
import { openDatabase } from "../../db/client.ts";
import { createNodeClient } from "../../db/node-client.ts";
import { systemClock } from "../../runtime/clock.ts";
import { screenshot, seriousAxeViolations, skipBrowser, startBrowserHost, UI_WAIT } from "./chromium.ts";

const ADMIN_TOKEN = "browser-roles-admin-token-0123456789";

/** Write controls, by their visible text, and who may see them. */
const CONTROLS: [path: string, button: string, minimum: "operator" | "admin"][] = [
  ["/", "Trigger now", "operator"],
  ["/", "Reset session…", "operator"],
  ["/", "Delete", "operator"],
  ["/fleet", "Simulate failure", "operator"],
  ["/fleet/sim-1", "Take action", "operator"],
  ["/fleet/sim-1", "Simulate failure", "operator"],
  ["/runs", "Trigger now", "operator"],
  ["/chat", "Send", "operator"],
  ["/agents", "Create agent", "admin"],
];

const RANK = { viewer: 0, operator: 1, admin: 2 } as const;
type Who = keyof typeof RANK;

const PAGES = [
  "/",
  "/fleet",
  "/fleet/sim-1",
  "/runs",
  "/runs/1",
  "/wakes",
  "/notifications",
  "/approvals",
  "/chat",
  "/agents",
  "/agents/default",
  "/operators",
];

describe.skipIf(skipBrowser)("roles and 390 px in Chromium", () => {
  let host: NodeHost;
  let browser: Browser;
  let close: () => Promise<void> = async () => {};
  const tokens: Record<Who, string> = { viewer: "", operator: "", admin: ADMIN_TOKEN };

  beforeAll(async () => {
    let dbPath: string;
    ({ host, browser, close, dbPath } = await startBrowserHost(ADMIN_TOKEN, {
      DEBOUNCE_HUMAN_MS: "200",
      SIMULATOR_FAILURE_RATE: "0",
      SIMULATOR_INSTANCES: "3",
    }));
    const api = (path: string, body: unknown) =>
      fetch(`${host.url}${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    for (const role of ["viewer", "operator"] as const)
      tokens[role] = (await (await api("/api/operators", { name: `${role}-ann`, role })).json()).token;
    expect((await api("/api/cron", {})).status).toBe(200);
    // A fact to delete (pinned here: the host's runs have no LLM to remember one), a message, and a run to show.
    const client = await createNodeClient(`file:${dbPath}`);
    await remember({ db: openDatabase(client), clock: systemClock }, "default", "gpu-notes", "sim-1 runs hot under load");
    client.close();
    await api("/api/agents/default/messages", {
      text: "a rather long message to the agent about sim-1, to see it wrap on a narrow screen",
    });
    await api("/api/agents/default/trigger", { reason: "browser test" });
  });

  afterAll(() => close());

  async function signIn(who: Who, width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${host.url}/sign-in`);
    await page.getByLabel("Operator or admin token").fill(tokens[who]);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Overview" }).waitFor(UI_WAIT);
    return page;
  }

  it("each role sees only the controls it may use; the Operators link only for admins", { timeout: 180_000 }, async () => {
    // Wait for the first run (so /runs/1 exists and the fact list is as it will be).
    for (
      let i = 0;
      i < 100 &&
      (await (await fetch(`${host.url}/api/agents/default/runs?limit=1`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json())
        .runs.length === 0;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const who of ["viewer", "operator", "admin"] as const) {
      const page = await signIn(who, 1280);
      expect(await page.getByRole("link", { name: "Operators", exact: true }).count(), `${who}: Operators link`).toBe(
        who === "admin" ? 1 : 0,
      );
      for (const [path, button, minimum] of CONTROLS) {
        await page.goto(`${host.url}${path}`);
        const shown = await page.getByRole("button", { name: button, exact: true }).count();
        expect(shown > 0, `${who} on ${path}: ${button}`).toBe(RANK[who] >= RANK[minimum]);
      }
      if (who === "viewer") {
        // Nothing that writes: the only forms a viewer gets are sign-out, the agent switcher and filters.
        for (const path of PAGES.filter((p) => p !== "/operators")) {
          await page.goto(`${host.url}${path}`);
          const posts = await page.locator('main form[method="post"]').count();
          expect(posts, `viewer on ${path}: forms that post`).toBe(0);
        }
        await page.goto(`${host.url}/operators`);
        expect(await page.getByRole("heading", { name: "Not allowed" }).count()).toBe(1);
        expect(await page.getByRole("alert").first().textContent()).toContain("This needs the admin role");
        expect(await seriousAxeViolations(page), "axe on the refusal page").toEqual([]);
      }
      await page.context().close();
    }
  });

  it("no page scrolls sideways at 390 px, for any role, and every page passes axe", { timeout: 240_000 }, async () => {
    for (const who of ["viewer", "admin"] as const) {
      const page = await signIn(who, 390);
      for (const path of PAGES) {
        await page.goto(`${host.url}${path}`);
        await page.locator("h1").waitFor(UI_WAIT);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        if (width > 390) await screenshot(page, `narrow-${who}-${path.replaceAll("/", "_")}`);
        expect(width, `${who} on ${path} at 390 px`).toBeLessThanOrEqual(390);
        if (who === "admin") expect(await seriousAxeViolations(page), `axe on ${path}`).toEqual([]);
      }
      await page.context().close();
    }
    const signedOut = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const signInPage = await signedOut.newPage();
    await signInPage.goto(`${host.url}/sign-in`);
    expect(await signInPage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await signedOut.close();
  });
});
