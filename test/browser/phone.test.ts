/**
 * The 3 am page on a phone (issue #38, item 2), in a real browser (playwright-core, Debian's
 * Chromium) at 390×844 against the real Node host with a seeded simulated fleet: three instances,
 * one failed and its restart waiting for approval, runs, a chat message. Every dashboard page
 * scrolls no wider than the screen, and the facts on-call needs are on it without scrolling
 * sideways: the overview's first steps, each instance's id, state and $/h on the Fleet page, each run's status and outcome on
 * the Runs page, a run's outcome on its page; the Approve button and the instance's action
 * button in view on load, full width and at least 44 px tall (a thumb's target).
 */
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodeHost } from "../../functions/host/node-host.ts";
import { screenshot, skipBrowser, startBrowserHost, UI_WAIT } from "./chromium.ts";

const ADMIN_TOKEN = "browser-phone-admin-token-0123456789";
const WIDTH = 390;
const HEIGHT = 844;

/** Every page of dashboard/routes.tsx that a GET renders, with the seeded ids. */
const PAGES = [
  "/",
  "/fleet",
  "/fleet/sim-1",
  "/fleet/sim-2",
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

describe.skipIf(skipBrowser)("on-call at 390 px in Chromium", () => {
  let host: NodeHost;
  let browser: Browser;
  let page: Page;
  let close: () => Promise<void> = async () => {};

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${host.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };

  async function until(what: string, check: () => Promise<boolean>) {
    for (let i = 0; i < 150; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  beforeAll(async () => {
    ({ host, browser, close } = await startBrowserHost(ADMIN_TOKEN, {
      DEBOUNCE_HUMAN_MS: "200",
      DEBOUNCE_STATE_MS: "300",
      SIMULATOR_FAILURE_RATE: "0",
      SIMULATOR_INSTANCES: "3",
      APPROVAL_REQUIRED_ACTIONS: "start,destroy",
    }));
    expect((await api("POST", "/api/cron", {})).status).toBe(200);
    // sim-1 exits: the rules policy asks a human to approve starting it again.
    expect((await api("POST", "/api/simulator/instances/sim-1/fail", { kind: "exit" })).status).toBe(200);
    await until("the approval", async () => (await api("GET", "/api/agents/default/approvals?status=pending")).json.approvals.length > 0);
    await api("POST", "/api/agents/default/messages", { text: "how is sim-2 doing? a long question to wrap on a narrow screen" });
    await until("two finished runs", async () => {
      const runs = (await api("GET", "/api/agents/default/runs?limit=5")).json.runs as { status: string }[];
      return runs.length >= 2 && runs.every((r) => r.status !== "running");
    });
    const context = await browser.newContext({ viewport: { width: WIDTH, height: HEIGHT }, isMobile: true, hasTouch: true });
    page = await context.newPage();
    await page.goto(`${host.url}/sign-in`);
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Overview" }).waitFor(UI_WAIT);
  }, 180_000);

  afterAll(() => close());

  const open = async (path: string) => {
    await page.goto(`${host.url}${path}`);
    await page.locator("h1").waitFor(UI_WAIT);
  };

  /** The element is shown and lies within the screen's width (no sideways scrolling to read it). */
  async function withinWidth(locator: Locator, what: string) {
    expect(await locator.isVisible(), `${what} visible`).toBe(true);
    const box = (await locator.boundingBox())!;
    expect(box.x, `${what} left edge`).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, `${what} right edge`).toBeLessThanOrEqual(WIDTH);
  }

  /** A thumb's target, in view on load: within the screen, full width (of the content), at least 44 px tall. */
  async function thumbButton(locator: Locator, what: string) {
    await withinWidth(locator, what);
    const box = (await locator.boundingBox())!;
    expect(box.y + box.height, `${what} in view on load`).toBeLessThanOrEqual(HEIGHT);
    expect(box.height, `${what} height`).toBeGreaterThanOrEqual(44);
    expect(box.width, `${what} width`).toBeGreaterThanOrEqual(WIDTH * 0.75);
  }

  it("no page scrolls sideways", { timeout: 120_000 }, async () => {
    for (const path of PAGES) {
      await open(path);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width > WIDTH) await screenshot(page, `phone-${path.replaceAll("/", "_")}`);
      expect(width, `${path} at ${WIDTH} px`).toBeLessThanOrEqual(WIDTH);
    }
  });

  it("the overview says what to do next on this simulated install, each step's link within the screen", { timeout: 60_000 }, async () => {
    await open("/");
    const box = page.getByTestId("first-steps");
    await withinWidth(box.getByRole("heading", { name: "What to do next" }), "the first steps' heading");
    // The simulator's own heartbeats are not the reporter, and no channel is set: all three steps.
    expect(await box.locator("li[data-step]").evaluateAll((steps) => steps.map((s) => s.getAttribute("data-step")))).toEqual([
      "provider",
      "reporter",
      "channel",
    ]);
    for (const link of await box.locator("a[data-doc]").all()) await withinWidth(link, `link ${await link.textContent()}`);
  });

  it("the Fleet page shows each instance's id, state and $/h without scrolling sideways", { timeout: 60_000 }, async () => {
    await open("/fleet");
    await screenshot(page, "phone-fleet");
    for (const id of ["sim-1", "sim-2", "sim-3"]) {
      const row = page.locator(`tr[data-instance-id="${id}"]`);
      await withinWidth(row.getByRole("link", { name: id, exact: true }), `${id}'s id`);
      const state = (await row.getAttribute("data-state"))!;
      await withinWidth(row.locator(".badge", { hasText: state }).first(), `${id}'s state`);
      await withinWidth(row.getByText(/^\$\d+\.\d\d\/h$/), `${id}'s $/h`);
    }
    expect(await page.locator('tr[data-instance-id="sim-1"]').getAttribute("data-state")).toBe("exited");
  });

  it("the Runs page shows each run's status and outcome; a run's page its outcome", { timeout: 60_000 }, async () => {
    await open("/runs");
    await screenshot(page, "phone-runs");
    const rows = page.locator("tr[data-run-id]");
    expect(await rows.count()).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < (await rows.count()); i++) {
      const row = rows.nth(i);
      const id = await row.getAttribute("data-run-id");
      await withinWidth(row.getByRole("link", { name: `#${id}` }), `run ${id}'s link`);
      await withinWidth(row.locator("td.outcome .badge").first(), `run ${id}'s status`);
      await withinWidth(row.locator('[data-role="outcome"]'), `run ${id}'s outcome`);
    }
    await open("/runs/1");
    await withinWidth(page.getByTestId("run-outcome"), "run 1's outcome");
  });

  it("the approval's Approve button and the instance's action button are a thumb's reach on load", { timeout: 60_000 }, async () => {
    const [pending] = (await api("GET", "/api/agents/default/approvals?status=pending")).json.approvals as { id: number }[];
    await open(`/approvals#approval-${pending!.id}`);
    await screenshot(page, "phone-approval");
    const card = page.locator(`#approval-${pending!.id}`);
    await withinWidth(card.getByRole("link", { name: "sim-1" }), "the approval's instance");
    await thumbButton(card.getByRole("button", { name: "Approve start" }), "Approve");
    await thumbButton(card.getByRole("button", { name: "Reject" }), "Reject");
    // Opened from the navigation (no anchor): the decide form stays in view at the bottom of the screen.
    await open("/approvals");
    await thumbButton(page.getByRole("button", { name: "Approve start" }), "Approve, from the navigation");

    await open("/fleet/sim-2");
    await screenshot(page, "phone-instance");
    await thumbButton(page.getByRole("button", { name: "Take action", exact: true }), "Take action");
    // The confirmation of a destructive action: its button too.
    await page.getByLabel("Action").selectOption("stop");
    await page.getByRole("button", { name: "Take action", exact: true }).click();
    await page.getByRole("heading", { name: "Stop sim-2?" }).waitFor(UI_WAIT);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(WIDTH);
    const yes = page.getByRole("button", { name: "Yes, stop sim-2" });
    await yes.scrollIntoViewIfNeeded();
    await withinWidth(yes, "Yes, stop");
    expect((await yes.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    expect((await yes.boundingBox())!.width).toBeGreaterThanOrEqual(WIDTH * 0.75);
  });
});
