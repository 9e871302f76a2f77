/** The cron tick prunes old dropped events and finished deliveries, and nothing else. */
import { describe, expect, it } from "vitest";
import { deliveries, events } from "../../schema/index.ts";
import { pruneOldRecords, RETENTION_MS, SLICE } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("retention", () => {
  it("deletes dropped events and finished deliveries older than the retention, keeping everything else", async () => {
    const deps = await createTestDeps();
    const old = deps.clock.now();
    const event = (dedupKey: string, status: string, createdAt: number) => ({
      agentId: "default", source: "webhook", priority: 1, dedupKey, payload: {}, status, createdAt, ...(status === "consumed" ? { runId: 1 } : {}),
    });
    await deps.db.insert(events).values([
      event("old-dropped", "dropped", old),
      event("old-consumed", "consumed", old),
      event("new-dropped", "dropped", old + RETENTION_MS),
    ]);
    const delivery = (dedupKey: string, status: string, createdAt: number) => ({ dedupKey, body: {}, status, dueAt: createdAt, createdAt });
    await deps.db.insert(deliveries).values([delivery("old-delivered", "delivered", old), delivery("old-failed", "failed", old), delivery("old-pending", "pending", old)]);

    deps.clock.advance(RETENTION_MS + 1);
    await runCronTick(deps);
    expect((await deps.db.select({ k: events.dedupKey }).from(events)).map((r) => r.k).sort()).toEqual(["new-dropped", "old-consumed"]);
    expect((await deps.db.select({ k: deliveries.dedupKey }).from(deliveries)).map((r) => r.k)).toEqual(["old-pending"]);
  });
});

describe("retention slices", () => {
  it("a backlog is pruned in bounded slices: at most 1,000 of each per tick, the rest on later ticks", async () => {
    const deps = await createTestDeps();
    const old = deps.clock.now();
    const rows = Array.from({ length: 1250 }, (_, i) => ({ agentId: "default", source: "webhook", priority: 1, dedupKey: `d${i}`, payload: {}, status: "dropped", createdAt: old }));
    for (let i = 0; i < rows.length; i += 250) await deps.db.insert(events).values(rows.slice(i, i + 250));
    deps.clock.advance(RETENTION_MS + 1);
    // A request's turn (a timer queued when the pruning starts) comes before the pruning ends.
    let finished = false;
    const servedMidway = new Promise<boolean>((resolve) => setTimeout(() => resolve(!finished), 0));
    expect(await pruneOldRecords(deps).finally(() => (finished = true))).toEqual({ events: 1000, deliveries: 0, telemetry: 0, llmCalls: 0 });
    expect(await servedMidway).toBe(true);
    expect(await pruneOldRecords(deps)).toEqual({ events: 250, deliveries: 0, telemetry: 0, llmCalls: 0 });
    expect(await pruneOldRecords(deps)).toEqual({ events: 0, deliveries: 0, telemetry: 0, llmCalls: 0 });
    expect(SLICE).toBeLessThan(1000);
  });
});
