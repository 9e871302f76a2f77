/**
 * Telemetry samples are bounded: the cron tick's retention pass deletes those older than
 * RETENTION_MS (7 days), at most 1,000 per tick in slices, and keeps the rest.
 */
import { describe, expect, it } from "vitest";
import { instanceTelemetry } from "../../schema/index.ts";
import { pruneOldRecords, RETENTION_MS } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("telemetry retention", () => {
  it("the cron tick deletes samples older than the retention, 1,000 a tick at most, and keeps newer ones", async () => {
    const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
    const old = deps.clock.now();
    const sample = (at: number) => ({ agentId: "default", instanceId: "gpu-1", gpuUtil: 50, diskUsedPct: null, source: "webhook", at });
    const rows = Array.from({ length: 1250 }, () => sample(old));
    for (let i = 0; i < rows.length; i += 250) await deps.db.insert(instanceTelemetry).values(rows.slice(i, i + 250));
    await deps.db.insert(instanceTelemetry).values([sample(old + 2), sample(old + 3)]);
    deps.clock.advance(RETENTION_MS + 1);
    await runCronTick(deps);
    expect(await deps.db.$count(instanceTelemetry)).toBe(252);
    expect(await pruneOldRecords(deps)).toMatchObject({ events: 0, deliveries: 0, telemetry: 250, llmCalls: 0 });
    expect(await pruneOldRecords(deps)).toMatchObject({ events: 0, deliveries: 0, telemetry: 0, llmCalls: 0 });
    expect((await deps.db.select({ at: instanceTelemetry.at }).from(instanceTelemetry)).map((r) => r.at - old)).toEqual([2, 3]);
  });
});
