/**
 * An operator's incident in a real browser (playwright-core, Debian's Chromium) against the real
 * Node host on a free port (embedded libSQL file, local scheduler, simulated fleet, no LLM, so
 * the rules policy decides; restarts need approval here so the story has a decision in it):
 * sign in; open the overview in one tab and the Fleet page in another; inject a failure from
 * the Fleet page; watch the overview's attention strip and the navigation badge change without
 * a reload; check the charts and their text alternatives; approve from the badge link with the
 * keyboard; watch the Fleet row come back without a reload; see the connection-lost alert when
 * the server goes away. Every page is checked with axe-core (no serious or critical
 * violations) and for keyboard reach of every form control, and saved as a screenshot under
 * test/artifacts/. Assertions are on content, never pixels.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodeHost } from "../../functions/host/node-host.ts";
import { controlsUnreachableByTab, screenshot, seriousAxeViolations, skipBrowser, startBrowserHost, UI_WAIT } from "./chromium.ts";

const ADMIN_TOKEN = "browser-story-admin-token-0123456789";

describe.skipIf(skipBrowser)("an operator's incident in Chromium", () => {
  let host: NodeHost;
  let browser: Browser;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ host, browser, close } = await startBrowserHost(ADMIN_TOKEN, {
      DEBOUNCE_HUMAN_MS: "200",
      DEBOUNCE_STATE_MS: "300",
      SIMULATOR_FAILURE_RATE: "0",
      SIMULATOR_INSTANCES: "3",
      APPROVAL_REQUIRED_ACTIONS: "start,destroy",
    }));
  });

  afterAll(() => close());

  const markNoReload = (page: Page) => page.evaluate(() => ((window as unknown as { noReload: boolean }).noReload = true));
  const stillNoReload = (page: Page) => page.evaluate(() => (window as unknown as { noReload?: boolean }).noReload === true);

  async function checkPage(page: Page, name: string) {
    await screenshot(page, name);
    expect(await seriousAxeViolations(page), `axe on ${name}`).toEqual([]);
    expect(await controlsUnreachableByTab(page), `keyboard on ${name}`).toEqual([]);
  }

  it("injects a failure, sees it live on the overview, approves the restart from the badge, and every page passes axe", {
    timeout: 240_000,
  }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const pageErrors: string[] = [];
    const overview = await context.newPage();
    overview.on("pageerror", (err) => pageErrors.push(String(err)));

    await overview.goto(`${host.url}/sign-in`);
    await checkPage(overview, "story-0-sign-in");
    await overview.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await overview.keyboard.press("Enter");
    await overview.getByRole("heading", { name: "Overview" }).waitFor(UI_WAIT);
    expect(await overview.getByTestId("attention").getAttribute("data-count")).toBe("0");
    // Charts exist, each with its summary: an image named by it, with the numbers as a table, or,
    // with nothing to draw yet (no runs on a fresh host), "Not enough data yet" instead of a box.
    for (const chart of ["fleet-states", "runs-chart", "tokens-chart", "activity-chart"]) {
      const figure = overview.locator(`figure[data-chart="${chart}"]`);
      const summary = (await overview.getByTestId(`${chart}-summary`).textContent())!.trim();
      expect(summary.length).toBeGreaterThan(10);
      if (await figure.getByTestId(`${chart}-empty`).count()) expect(await figure.locator("svg").count()).toBe(0);
      else expect(await figure.locator('svg[role="img"]').getAttribute("aria-label")).toContain(summary);
    }
    expect(await overview.locator('figure[data-chart="fleet-states"] svg').getAttribute("aria-label")).toContain("3 instances: 3 running");
    await markNoReload(overview);

    // The Fleet page in a second tab: a compact table; inject a failure into sim-1.
    const fleet = await context.newPage();
    fleet.on("pageerror", (err) => pageErrors.push(String(err)));
    await fleet.goto(`${host.url}/fleet`);
    const row = fleet.locator('tr[data-instance-id="sim-1"]');
    expect(await row.getAttribute("data-state")).toBe("running");
    await checkPage(fleet, "story-1-fleet");
    await row.getByLabel("Failure to simulate on sim-1").selectOption("exit");
    await row.getByRole("button", { name: "Simulate failure" }).click();
    await fleet.getByText("Failure injected into the simulated instance").waitFor(UI_WAIT);
    expect(await fleet.locator('tr[data-instance-id="sim-1"]').getAttribute("data-state")).toBe("exited");
    await markNoReload(fleet);

    // The overview, never reloaded: the strip names sim-1, then the approval the rules policy asked for.
    await overview.locator('[data-testid="attention-instance"][data-instance-id="sim-1"]').waitFor(UI_WAIT);
    await overview.getByTestId("attention-approvals").waitFor(UI_WAIT);
    expect(await overview.getByTestId("attention-approvals").textContent()).toContain("1 approval waiting: start sim-1");
    const badge = overview.getByRole("link", { name: "Approvals 1 waiting" });
    await badge.waitFor(UI_WAIT);
    expect(await stillNoReload(overview)).toBe(true);
    expect(await overview.locator('figure[data-chart="activity-chart"] svg').getAttribute("aria-label")).toMatch(
      /[1-9]\d* actions? and [1-9]\d* notifications? in the last 24 hours/,
    );
    expect(await overview.locator("[data-live-indicator]").textContent()).toMatch(/Live: updated at \d\d:\d\d:\d\d UTC/);
    await checkPage(overview, "story-2-overview-attention");

    // Approve from the badge link, with the keyboard.
    await badge.click();
    await overview.getByRole("heading", { name: "Approvals" }).waitFor(UI_WAIT);
    await checkPage(overview, "story-3-approvals");
    const approve = overview.getByRole("button", { name: "Approve start" });
    await approve.focus();
    await overview.keyboard.press("Enter");
    await overview.getByText("Approved: the agent is woken").waitFor(UI_WAIT);

    // The Fleet tab, never reloaded, shows sim-1 running again.
    await expect.poll(() => fleet.locator('tr[data-instance-id="sim-1"]').getAttribute("data-state"), UI_WAIT).toBe("running");
    expect(await stillNoReload(fleet)).toBe(true);

    // The approval's notification links to the approval; the runs say what was decided.
    await overview.goto(`${host.url}/notifications`);
    const link = overview.getByRole("link", { name: /Decide on approval #\d+/ });
    expect(await link.getAttribute("href")).toMatch(/^\/approvals#approval-\d+$/);
    await checkPage(overview, "story-4-notifications");
    await overview.goto(`${host.url}/runs`);
    await overview.getByText("asked a human to approve start sim-1").first().waitFor(UI_WAIT);
    await checkPage(overview, "story-5-runs");
    const runHref = (await overview.locator("tr[data-run-id] a").first().getAttribute("href"))!;
    await overview.goto(`${host.url}${runHref}`);
    await overview.getByRole("heading", { name: /Decisions|Tool calls and results/ }).waitFor(UI_WAIT);
    await checkPage(overview, "story-6-run");
    await overview.goto(`${host.url}/fleet/sim-1`);
    await overview.getByText("exited → running (action)").first().waitFor(UI_WAIT);
    await checkPage(overview, "story-7-instance");
    for (const [path, name] of [
      ["/wakes", "story-8-wakes"],
      ["/chat", "story-9-chat"],
      ["/", "story-10-overview"],
    ] as const) {
      await overview.goto(`${host.url}${path}`);
      await checkPage(overview, name);
    }

    // The server goes away: the open page says its view is stale.
    await host.stop();
    await overview.locator("[data-live-lost]").getByText("Connection lost").waitFor(UI_WAIT);
    expect(await overview.evaluate(() => document.body.getAttribute("data-connection"))).toBe("lost");
    await screenshot(overview, "story-11-connection-lost");
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
