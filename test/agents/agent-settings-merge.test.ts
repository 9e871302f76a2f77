/**
 * Money settings where people look (issue #33 item 5): PATCH /api/agents/:agent merges settings
 * as a JSON Merge Patch (one key kept alongside the others, `null` removes a key so the
 * environment's default applies again, `channels` merged key by key, masks kept), bad values are a
 * 400 naming the field with nothing written, and the Agents form saves and shows the idle stop
 * window, the daily spend limit (`none` = no limit), replace-after and the replacement's max
 * price factor, each shown as the agent's own or from the environment.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { mergePatch } from "../../jobs/agent-admin-requests.ts";
import { createAgent } from "../../pipeline/index.ts";
import { agents } from "../../schema/index.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

const SLACK = "https://hooks.slack.com/services/T000/B000/sEcReTtOkEn123";
const NTFY = "https://ntfy.example/alerts-s3cret";
const ENV = { IDLE_STOP_AFTER_S: "3600", SPEND_LIMIT_PER_DAY_USD: "500", REPLACE_AFTER_S: "1800", REPLACE_MAX_PRICE_FACTOR: "1.25" };

async function setup(settings: Record<string, unknown> = {}) {
  const deps = await createTestDeps({ vars: ENV });
  await createAgent(deps.db, { id: "team-b", settings }, deps.clock.now());
  const app = buildApp(() => deps);
  const patch = async (body: unknown) => {
    const res = await app.request("/api/agents/team-b", { method: "PATCH", headers: authHeaders(), body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const stored = async () => (await deps.db.select().from(agents).where(eq(agents.id, "team-b")))[0]!.settings as Record<string, any>;
  const config = async () => (await withAgent(deps, "team-b"))!.deps.config;
  return { deps, patch, stored, config };
}

describe("mergePatch (RFC 7396)", () => {
  it("merges objects recursively, removes a key on null, and replaces arrays and scalars", () => {
    expect(mergePatch({ a: "b", c: { d: "e", f: "g" } }, { a: "z", c: { f: null } })).toEqual({ a: "z", c: { d: "e" } });
    expect(mergePatch({ a: [1, 2] }, { a: [3] })).toEqual({ a: [3] });
    expect(mergePatch({ a: { b: 1 } }, { a: 5 })).toEqual({ a: 5 });
    expect(mergePatch({}, { a: { b: null } })).toEqual({ a: {} });
  });
});

describe("PATCH /api/agents/:agent merges settings", () => {
  it("a PATCH of one key keeps the others", async () => {
    const { patch, stored, config } = await setup({ idleStopAfterS: 600, spendLimitPerDayUsd: 40, channels: { slack: SLACK } });
    const res = await patch({ settings: { replaceAfterS: 300 } });
    expect(res.status).toBe(200);
    expect(await stored()).toEqual({ idleStopAfterS: 600, spendLimitPerDayUsd: 40, channels: { slack: SLACK }, replaceAfterS: 300 });
    expect((await config()).replace.afterMs).toBe(300_000);
    expect((await config()).economics.spendLimitPerDayUsd).toBe(40);
  });

  it("null removes a key: the environment's default applies again", async () => {
    const { patch, stored, config } = await setup({ idleStopAfterS: 600, replaceMaxPriceFactor: 1.1 });
    expect((await config()).economics.idleStopAfterMs).toBe(600_000);
    expect((await patch({ settings: { idleStopAfterS: null } })).status).toBe(200);
    expect(await stored()).toEqual({ replaceMaxPriceFactor: 1.1 });
    expect((await config()).economics.idleStopAfterMs).toBe(3_600_000);
    expect((await config()).replace.maxPriceFactor).toBe(1.1);
  });

  it("merges channels key by key, and a mask sent back keeps the stored URL", async () => {
    const { patch, stored } = await setup({ channels: { slack: SLACK } });
    expect((await patch({ settings: { channels: { ntfy: NTFY } } })).status).toBe(200);
    expect(await stored()).toEqual({ channels: { slack: SLACK, ntfy: NTFY } });
    const shown = await patch({ settings: { channels: { slack: "https://hooks.slack.com/…" } } });
    expect(shown.json.settings.channels).toEqual({ slack: "https://hooks.slack.com/…", ntfy: "https://ntfy.example/…" });
    expect(await stored()).toEqual({ channels: { slack: SLACK, ntfy: NTFY } });
    expect((await patch({ settings: { channels: { slack: null } } })).status).toBe(200);
    expect(await stored()).toEqual({ channels: { ntfy: NTFY } });
  });

  it("refuses bad values with a 400 naming the field, writing nothing", async () => {
    const before = { idleStopAfterS: 600, instanceFilter: { ids: ["i-1"] } };
    const { patch, stored } = await setup(before);
    const cases: [unknown, string][] = [
      [{ replaceMaxPriceFactor: 20 }, "settings.replaceMaxPriceFactor: must be at most 10"],
      [{ replaceMaxPriceFactor: 0.5 }, "settings.replaceMaxPriceFactor: must be at least 1"],
      [{ spendLimitPerDayUsd: 0 }, "settings.spendLimitPerDayUsd: must be more than 0"],
      [{ idleStopAfterS: 1.5 }, "settings.idleStopAfterS: must be a whole number"],
      [{ replaceAfterS: -1 }, "settings.replaceAfterS: must be at least 0"],
      [{ noSuchKey: 1 }, "settings"],
      // Valid alone, invalid once merged: both kinds of filter at once.
      [{ instanceFilter: { labelPrefix: "b-" } }, "settings.instanceFilter: must give exactly one of labelPrefix or ids"],
    ];
    for (const [settings, message] of cases) {
      const res = await patch({ settings, name: "renamed" });
      expect(res.status, JSON.stringify(settings)).toBe(400);
      expect(res.json.error, JSON.stringify(settings)).toContain(message);
    }
    expect(await stored()).toEqual(before);
  });
});

describe("the Agents form edits the money settings", () => {
  const form = (fields: Record<string, string>) => ({ name: "", approvalMode: "default", filterKind: "none", filterValue: "", ...fields });

  it("each new field saves, shows, and is shown as the agent's own; empty fields show the environment's", async () => {
    const { deps, stored, config } = await setup();
    const client = await dashboardClient(deps);
    const untouched = (await client.page("/agents/team-b")).html;
    for (const [key, variable] of [
      ["idleStopAfterS", "IDLE_STOP_AFTER_S"],
      ["spendLimitPerDayUsd", "SPEND_LIMIT_PER_DAY_USD"],
      ["replaceAfterS", "REPLACE_AFTER_S"],
      ["replaceMaxPriceFactor", "REPLACE_MAX_PRICE_FACTOR"],
    ]) {
      expect(untouched).toMatch(new RegExp(`<tr data-setting="${key}">.*?<td>from environment \\(${variable}\\)</td></tr>`));
    }

    const saved = await client.post(
      "/agents/team-b",
      form({ idleStopAfterS: "900", spendLimitPerDayUsd: "12.5", replaceAfterS: "600", replaceMaxPriceFactor: "1.1" }),
    );
    expect(saved.status).toBe(303);
    expect(await stored()).toEqual({ idleStopAfterS: 900, spendLimitPerDayUsd: 12.5, replaceAfterS: 600, replaceMaxPriceFactor: 1.1 });
    const c = await config();
    expect([c.economics.idleStopAfterMs, c.economics.spendLimitPerDayUsd, c.replace.afterMs, c.replace.maxPriceFactor]).toEqual([
      900_000, 12.5, 600_000, 1.1,
    ]);
    const page = (await client.page("/agents/team-b")).html;
    for (const [key, value, shown] of [
      ["idleStopAfterS", "900", "900 s"],
      ["spendLimitPerDayUsd", "12.5", "$12.5 per day"],
      ["replaceAfterS", "600", "600 s"],
      ["replaceMaxPriceFactor", "1.1", "1.1 × the old price"],
    ]) {
      expect(page).toContain(`name="${key}" value="${value}"`);
      expect(page).toContain(
        `<tr data-setting="${key}"><th scope="row">${key}</th><td>${shown}</td><td>this agent&#39;s setting</td></tr>`,
      );
    }
  });

  it("`none` is no daily limit even when the environment sets one; an empty field is the environment's limit", async () => {
    const { deps, stored, config } = await setup({ spendLimitPerDayUsd: 40 });
    const client = await dashboardClient(deps);
    expect((await client.post("/agents/team-b", form({ spendLimitPerDayUsd: "none" }))).status).toBe(303);
    expect(await stored()).toEqual({ spendLimitPerDayUsd: null });
    expect((await config()).economics.spendLimitPerDayUsd).toBeNull();
    const page = (await client.page("/agents/team-b")).html;
    expect(page).toContain('name="spendLimitPerDayUsd" value="none"');
    expect(page).toContain("<td>no limit</td><td>this agent&#39;s setting</td>");

    expect((await client.post("/agents/team-b", form({ spendLimitPerDayUsd: "" }))).status).toBe(303);
    expect(await stored()).toEqual({});
    expect((await config()).economics.spendLimitPerDayUsd).toBe(500);
  });

  it("refuses a bad value with a 400 naming the field, saving nothing", async () => {
    const { deps, stored } = await setup({ idleStopAfterS: 600 });
    const client = await dashboardClient(deps);
    const cases: [string, string, string][] = [
      ["replaceMaxPriceFactor", "11", "replaceMaxPriceFactor: must be at most 10"],
      ["spendLimitPerDayUsd", "cheap", "spendLimitPerDayUsd"],
      ["idleStopAfterS", "1.5", "idleStopAfterS: must be a whole number"],
    ];
    for (const [field, value, message] of cases) {
      const res = await client.post("/agents/team-b", form({ idleStopAfterS: "600", [field]: value }));
      expect(res.status, field).toBe(400);
      expect(await res.text(), field).toContain(message);
    }
    expect(await stored()).toEqual({ idleStopAfterS: 600 });
  });
});
