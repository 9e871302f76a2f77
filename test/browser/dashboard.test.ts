/**
 * The dashboard's main path in a real browser: playwright-core drives Debian's Chromium against
 * the real Node host (embedded libSQL file, local scheduler, simulated fleet) started in-process
 * on a free port, at phone width. Sign in; send a chat message and see its reply; Trigger now
 * and see the run appear; see a run appear with no reload (live update); reset the session and
 * check the run counter did not go back; sign out. Screenshots go to test/artifacts/.
 *
 * Without Chromium (/usr/bin/chromium, or CHROMIUM_PATH) the test is skipped with a warning, except under CI=true, where it
 * fails: CI must run it (`.ci/run` installs Chromium).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodeHost } from "../../functions/host/node-host.ts";
import { screenshot, skipBrowser, startBrowserHost, UI_WAIT } from "./chromium.ts";

const ADMIN_TOKEN = "browser-test-admin-token-0123456789";

describe.skipIf(skipBrowser)("dashboard in Chromium", () => {
  let host: NodeHost;
  let browser: Browser;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ host, browser, close } = await startBrowserHost(ADMIN_TOKEN, { DEBOUNCE_HUMAN_MS: "200", SIMULATOR_FAILURE_RATE: "0" }));
  });

  afterAll(() => close());

  const shot = screenshot;
  const text = async (page: Page, testId: string) => (await page.getByTestId(testId).first().textContent())?.trim() ?? "";
  const latestRunId = async (page: Page) => Number((await page.locator("[data-run-id]").first().getAttribute("data-run-id")) ?? 0);

  it("signs in, chats, triggers, updates live, resets without losing the run counter, signs out", { timeout: 180_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(String(err)));

    // Signed out: the dashboard sends us to the sign-in page.
    await page.goto(host.url);
    await expect.poll(() => new URL(page.url()).pathname).toBe("/sign-in");
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await shot(page, "1-sign-in");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor(UI_WAIT);
    expect(await page.getByText("Simulated fleet.").isVisible()).toBe(true);
    // Keyboard users land on the skip link first; nothing is wider than a phone.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe("Skip to content");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot(page, "2-overview");

    // Fleet: the simulated fleet says so.
    await page.getByRole("link", { name: "Fleet", exact: true }).click();
    await page.getByRole("heading", { name: "Fleet" }).waitFor(UI_WAIT);
    expect(await page.getByText("Simulated fleet.").isVisible()).toBe(true);
    await shot(page, "2b-fleet");

    // Chat: the message appears, then the reply of the run that consumed it.
    const message = `Status of the fleet? ${Date.now()}`;
    await page.getByRole("link", { name: "Chat", exact: true }).click();
    await page.getByLabel("Message to the agent").fill(message);
    await page.getByRole("button", { name: "Send" }).click();
    const item = page.locator("li.chat-item", { hasText: message });
    await item.waitFor(UI_WAIT);
    await item.locator('[data-role="reply"]').waitFor(UI_WAIT);
    expect((await item.locator('[data-role="reply"]').textContent())?.trim().length).toBeGreaterThan(0);
    await shot(page, "3-chat-reply");

    // Trigger now: a new run appears in the timeline.
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    const before = await latestRunId(page);
    expect(before).toBeGreaterThanOrEqual(1);
    await page.getByRole("button", { name: "Trigger now" }).click();
    await page.locator(`[data-run-id="${before + 1}"]`).waitFor(UI_WAIT);
    await shot(page, "4-triggered");

    // Live update: a run started elsewhere (the API) appears with no reload of this page.
    await page.evaluate(() => ((window as unknown as { noReload: boolean }).noReload = true));
    const api = await fetch(`${host.url}/api/agents/default/trigger`, {
      method: "POST",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ reason: "browser test" }),
    });
    expect(api.status).toBe(202);
    await page.locator(`[data-run-id="${before + 2}"]`).waitFor(UI_WAIT);
    expect(await page.evaluate(() => (window as unknown as { noReload?: boolean }).noReload)).toBe(true);
    await shot(page, "5-live-update");

    // Reset: confirm the dialog (it says what reset keeps); counter stays, epoch goes up.
    await page.getByRole("link", { name: "Overview", exact: true }).click();
    await expect.poll(() => text(page, "run-counter"), UI_WAIT).toBe(String(before + 2));
    const epoch = Number(await text(page, "session-epoch"));
    let dialogText = "";
    page.once("dialog", (dialog) => {
      dialogText = dialog.message();
      void dialog.accept();
    });
    await page.getByRole("button", { name: "Reset session…" }).click();
    await page.getByText("Session reset: a new conversation epoch started.").waitFor(UI_WAIT);
    expect(dialogText).toContain("keeps the run counter");
    expect(await text(page, "run-counter")).toBe(String(before + 2));
    expect(await text(page, "session-epoch")).toBe(String(epoch + 1));
    await shot(page, "6-after-reset");

    // A trigger right after the reset runs normally, with the next run id.
    await page.getByRole("button", { name: "Trigger now" }).click();
    await expect.poll(() => text(page, "run-counter"), UI_WAIT).toBe(String(before + 3));

    // Sign out: back to the sign-in page, and the dashboard is closed again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor(UI_WAIT);
    await page.goto(`${host.url}/runs`);
    await expect.poll(() => new URL(page.url()).pathname).toBe("/sign-in");
    await shot(page, "7-signed-out");
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
