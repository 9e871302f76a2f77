/**
 * The cron tick prunes old dropped and consumed events, finished deliveries, old instance history
 * and old replays, in bounded slices, and nothing pending or recent.
 */
import { describe, expect, it } from "vitest";
import { deliveries, events, instanceEvents, replays } from "../../schema/index.ts";
import { HISTORY_RETENTION_MS, pruneOldRecords, RETENTION_MS, SLICE } from "../../pipeline/index.ts";
import { DAY_MS } from "../../runtime/time.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("retention", () => {
  it("deletes dropped and consumed events and finished deliveries older than the retention, keeping everything else", async () => {
    const deps = await createTestDeps();
    const old = deps.clock.now();
    const event = (dedupKey: string, status: string, createdAt: number) => ({
      agentId: "default",
      source: "webhook",
      priority: 1,
      dedupKey,
      payload: {},
      status,
      createdAt,
      ...(status === "consumed" ? { runId: 1 } : {}),
    });
    await deps.db
      .insert(events)
      .values([
        event("old-dropped", "dropped", old),
        event("old-consumed", "consumed", old),
        event("old-pending", "pending", old),
        event("new-dropped", "dropped", old + RETENTION_MS),
        event("new-consumed", "consumed", old + RETENTION_MS),
      ]);
    const delivery = (dedupKey: string, status: string, createdAt: number) => ({ dedupKey, body: {}, status, dueAt: createdAt, createdAt });
    await deps.db
      .insert(deliveries)
      .values([
        delivery("old-delivered", "delivered", old),
        delivery("old-failed", "failed", old),
        delivery("old-pending", "pending", old),
      ]);

    deps.clock.advance(RETENTION_MS + 1);
    await runCronTick(deps);
    expect((await deps.db.select({ k: events.dedupKey }).from(events)).map((r) => r.k).sort()).toEqual([
      "new-consumed",
      "new-dropped",
      "old-pending",
    ]);
    expect((await deps.db.select({ k: deliveries.dedupKey }).from(deliveries)).map((r) => r.k)).toEqual(["old-pending"]);
  });
});

describe("history retention", () => {
  it("instance history older than HISTORY_RETENTION_MS and replays older than LLM_TRANSCRIPT_DAYS go; newer stay; a backlog goes in bounded slices", async () => {
    const deps = await createTestDeps({ vars: { LLM_TRANSCRIPT_DAYS: "14" } });
    const old = deps.clock.now();
    const history = (i: number, createdAt: number) => ({
      agentId: "default",
      instanceId: "sim-1",
      toState: "running",
      source: "webhook",
      at: createdAt,
      createdAt,
      message: `h${i}`,
    });
    const backlog = Array.from({ length: 1100 }, (_, i) => history(i, old));
    for (let i = 0; i < backlog.length; i += 250) await deps.db.insert(instanceEvents).values(backlog.slice(i, i + 250));
    await deps.db.insert(instanceEvents).values(history(9999, old + 20 * DAY_MS));
    await deps.db.insert(replays).values([
      { agentId: "default", runId: 1, model: "m", operator: "admin", result: {}, createdAt: old },
      { agentId: "default", runId: 2, model: "m", operator: "admin", result: {}, createdAt: old + 20 * DAY_MS },
    ]);
    deps.clock.advance(HISTORY_RETENTION_MS + 1);
    expect(await pruneOldRecords(deps)).toMatchObject({ history: 1000, replays: 1 });
    expect(await pruneOldRecords(deps)).toMatchObject({ history: 100, replays: 0 });
    expect((await deps.db.select({ m: instanceEvents.message }).from(instanceEvents)).map((r) => r.m)).toEqual(["h9999"]);
    expect((await deps.db.select({ run: replays.runId }).from(replays)).map((r) => r.run)).toEqual([2]);
  });
});

describe("retention slices", () => {
  it("a backlog is pruned in bounded slices: at most 1,000 of each per tick, the rest on later ticks", async () => {
    const deps = await createTestDeps();
    const old = deps.clock.now();
    const rows = Array.from({ length: 1250 }, (_, i) => ({
      agentId: "default",
      source: "webhook",
      priority: 1,
      dedupKey: `d${i}`,
      payload: {},
      status: "dropped",
      createdAt: old,
    }));
    for (let i = 0; i < rows.length; i += 250) await deps.db.insert(events).values(rows.slice(i, i + 250));
    deps.clock.advance(RETENTION_MS + 1);
    // A request's turn (a timer queued when the pruning starts) comes before the pruning ends.
    let finished = false;
    const servedMidway = new Promise<boolean>((resolve) => setTimeout(() => resolve(!finished), 0));
    expect(await pruneOldRecords(deps).finally(() => (finished = true))).toMatchObject({
      events: 1000,
      deliveries: 0,
      telemetry: 0,
      llmCalls: 0,
    });
    expect(await servedMidway).toBe(true);
    expect(await pruneOldRecords(deps)).toMatchObject({ events: 250, deliveries: 0, telemetry: 0, llmCalls: 0 });
    expect(await pruneOldRecords(deps)).toMatchObject({ events: 0, deliveries: 0, telemetry: 0, llmCalls: 0 });
    expect(SLICE).toBeLessThan(1000);
  });
});
