/**
 * Several agents in a real browser (playwright-core, Debian's Chromium) against the real Node
 * host on a free port: an admin creates a second agent from the agents page, switches to it with
 * the navigation's switcher, follows links and triggers a run on it without losing it, sees its
 * live updates arrive, and switches back. The agents page, an agent's page and a page with the
 * switcher pass axe-core (no serious or critical violations) and keyboard reach.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodeHost } from "../../functions/host/node-host.ts";
import { controlsUnreachableByTab, screenshot, seriousAxeViolations, skipBrowser, startBrowserHost, UI_WAIT } from "./chromium.ts";

const ADMIN_TOKEN = "browser-agents-admin-token-0123456789";

describe.skipIf(skipBrowser)("agents in Chromium", () => {
  let host: NodeHost;
  let browser: Browser;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ host, browser, close } = await startBrowserHost(ADMIN_TOKEN, {
      DEBOUNCE_HUMAN_MS: "200",
      SIMULATOR_FAILURE_RATE: "0",
      SIMULATOR_INSTANCES: "3",
    }));
  });

  afterAll(() => close());

  async function checkPage(page: Page, name: string) {
    await screenshot(page, name);
    expect(await seriousAxeViolations(page), `axe on ${name}`).toEqual([]);
    expect(await controlsUnreachableByTab(page), `keyboard on ${name}`).toEqual([]);
  }

  const agentOf = (page: Page) => new URL(page.url()).searchParams.get("agent");

  it("creates a second agent, switches to it, stays on it through links, posts and live updates, and switches back", {
    timeout: 180_000,
  }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(String(err)));

    await page.goto(`${host.url}/sign-in`);
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Overview" }).waitFor(UI_WAIT);
    expect(await page.locator("[data-agent-switcher]").count()).toBe(0);

    await page.getByRole("link", { name: "Agents", exact: true }).click();
    await page.getByRole("heading", { name: "Agents" }).waitFor(UI_WAIT);
    await checkPage(page, "agents-0-list");
    await page.getByLabel("Id (letters, digits, - or _)").fill("team-b");
    await page.getByLabel("Name").fill("Team B");
    await page.getByLabel("Filter").selectOption("ids");
    await page.getByLabel("Label prefix, or ids separated by commas").fill("sim-3");
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { name: "Agent Team B (team-b)" }).waitFor(UI_WAIT);
    expect(await page.getByRole("status").textContent()).toContain("Agent created");
    await checkPage(page, "agents-1-agent-page");

    // The switcher appears now that there are two agents; switch the overview to team-b.
    await page.getByRole("link", { name: "Overview" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor(UI_WAIT);
    await page.getByRole("combobox", { name: "Agent", exact: true }).selectOption("team-b");
    await page.getByRole("button", { name: "Switch" }).click();
    await page.waitForURL(/agent=team-b/, UI_WAIT);
    expect(await page.getByRole("combobox", { name: "Agent", exact: true }).inputValue()).toBe("team-b");
    await checkPage(page, "agents-2-overview-team-b");

    // Links and posts stay on team-b.
    await page.getByRole("link", { name: "Fleet", exact: true }).click();
    await page.getByRole("heading", { name: "Fleet" }).waitFor(UI_WAIT);
    expect(agentOf(page)).toBe("team-b");
    // The tick reconciles the new agent's fleet; the live table then shows only its instance.
    const cron = await fetch(`${host.url}/api/cron`, { method: "POST", headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(cron.status).toBe(200);
    await page.locator('tr[data-instance-id="sim-3"]').waitFor({ timeout: 40_000 });
    expect(await page.locator("tr[data-instance-id]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-instance-id")))).toEqual([
      "sim-3",
    ]);
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.getByRole("button", { name: "Trigger now" }).click();
    await page.waitForURL(/done=triggered/, UI_WAIT);
    expect(agentOf(page)).toBe("team-b");
    // Its live updates arrive (the poll asks about team-b) and show its first run.
    await page.locator("[data-live-indicator]").filter({ hasText: "Live: updated at" }).waitFor(UI_WAIT);
    await page.locator('a[href="/runs/1?agent=team-b"]').first().waitFor(UI_WAIT);

    // Back to the default agent: the same section, and nothing on the page leads to team-b.
    await page.getByRole("combobox", { name: "Agent", exact: true }).selectOption("default");
    await page.getByRole("button", { name: "Switch" }).click();
    await page.waitForURL(/\/runs\?agent=default/, UI_WAIT);
    expect(await page.locator('[href*="agent=team-b"], [action*="agent=team-b"]').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
