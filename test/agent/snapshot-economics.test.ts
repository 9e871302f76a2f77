/**
 * The agent sees the fleet's economics (issue #21, part 5): the snapshot shows each instance's
 * $/h (running price, storage while stopped), GPU utilisation with its age, idle minutes only on
 * fresh telemetry, and spend today (this agent, today's UTC day) against the daily limit — read
 * in the snapshot's own batch, so building the prompt costs no extra database round trip.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { buildPromptDraft } from "../../agent/prompt/prompt.ts";
import { instances, instanceSpend } from "../../schema/index.ts";
import { countingClient } from "../support/counting-client.ts";
import { createTestDeps } from "../support/test-deps.ts";

const MIN = 60_000;

describe("economics in the fleet snapshot", () => {
  it("shows $/h, utilisation with its age, idle minutes on fresh telemetry only, and spend today against the limit", async () => {
    const { client, counter } = countingClient(createClient({ url: ":memory:" }));
    const db = openDatabase(client);
    await applyMigrations(db);
    const deps = await createTestDeps({ db, vars: { SPEND_LIMIT_PER_DAY_USD: "20", TELEMETRY_STALE_S: "600" } });
    const now = deps.clock.now();
    const base = { agentId: "default", stateAt: now - 90 * MIN, lastSeenAt: now, updatedAt: now, pricePerHour: 0.5, storagePerHour: 0.02 };
    await db.insert(instances).values([
      { ...base, id: "idle-1", state: "running", gpuUtil: 2, gpuUtilAt: now - MIN, idleSince: now - 31 * MIN, telemetrySource: "vast" },
      { ...base, id: "stale-1", state: "running", gpuUtil: 1, gpuUtilAt: now - 120 * MIN, idleSince: now - 180 * MIN },
      { ...base, id: "busy-1", state: "running", gpuUtil: 97, gpuUtilAt: now - 30_000, idleSince: null },
      { ...base, id: "parked-1", state: "stopped" },
      { ...base, id: "zz-down", state: "exited" },
    ]);
    const today = new Date(now).toISOString().slice(0, 10);
    await db.insert(instanceSpend).values([
      { agentId: "default", instanceId: "idle-1", day: today, usd: 3.5 },
      { agentId: "default", instanceId: "busy-1", day: today, usd: 1.25 },
      { agentId: "default", instanceId: "busy-1", day: "2025-12-31", usd: 100 },
      { agentId: "other", instanceId: "x", day: today, usd: 50 },
    ]);

    counter.reset();
    const draft = await buildPromptDraft(deps, { agentId: "default", runId: 1, sessionEpoch: 1, events: [], wakes: [] });
    // Everything the prompt reads (session, fleet, memory, spend, history, rejections, re-checks) in one batch.
    expect(counter.calls).toBe(1);
    const context = String(draft.input.content);
    expect(context).toContain("(5 instances; spend today $4.75 of $20.00 daily limit (24 %)):");
    const lines = context
      .split("\n<fleet_snapshot>\n")[1]!
      .split("\n</fleet_snapshot>")[0]!
      .split("\n")
      .map((l) => JSON.parse(l));
    // The instance needing attention comes first, whatever its id.
    expect(lines.map((l) => l.id)).toEqual(["zz-down", "busy-1", "idle-1", "parked-1", "stale-1"]);
    const byId = Object.fromEntries(lines.map((l) => [l.id, l]));
    expect(byId["idle-1"]).toMatchObject({ usdPerHour: 0.5, gpuUtilPct: 2, gpuUtilAgeS: 60, idleMin: 31 });
    expect(byId["idle-1"].telemetry).toBeUndefined();
    expect(byId["stale-1"]).toMatchObject({ gpuUtilPct: 1, gpuUtilAgeS: 7200, telemetry: "stale" });
    expect(byId["stale-1"].idleMin).toBeUndefined();
    expect(byId["busy-1"]).toMatchObject({ gpuUtilPct: 97, gpuUtilAgeS: 30 });
    expect(byId["busy-1"].idleMin).toBeUndefined();
    expect(byId["parked-1"]).toMatchObject({ state: "stopped", usdPerHour: 0.02 });
    expect(byId["parked-1"].gpuUtilPct).toBeUndefined();

    deps.config = { ...deps.config, economics: { ...deps.config.economics, spendLimitPerDayUsd: null } };
    const unlimited = await buildPromptDraft(deps, { agentId: "default", runId: 2, sessionEpoch: 1, events: [], wakes: [] });
    expect(String(unlimited.input.content)).toContain("spend today $4.75 (no daily limit)");
  });
});
