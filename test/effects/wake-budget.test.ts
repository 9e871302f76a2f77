/**
 * Budgeted self-wakes (invariant 11): schedule_next_check raises a delay under WAKE_MIN_DELAY_S
 * to the floor and says so; past WAKES_PER_HOUR the tool refuses with a message the model can
 * act on; the rules policy obeys the same limits; and an LLM that re-schedules itself every run
 * gets at most one run per floor interval, not one every few seconds.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runToolCall } from "../../agent/tools/index.ts";
import { runs, wakes } from "../../schema/index.ts";
import { cancelWake } from "../../pipeline/index.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { deliverDue } from "../support/drive.ts";
import { holdLease } from "../support/held-lease.ts";
import { agentFixture, scriptedLlm, setInstanceState, trigger } from "../agent/harness.ts";

let call = 0;
/** Calls the tool as run `runId` would, holding that run's lease for the call only. */
const schedule = async (deps: TestDeps, args: Record<string, unknown>, runId = 1) => {
  const fence = await holdLease(deps, "default", runId);
  try {
    return await runToolCall(
      { deps, agentId: "default", runId, toolCallId: `c${++call}`, fence, answering: { events: [], wakes: [] } },
      "schedule_next_check",
      JSON.stringify(args),
    );
  } finally {
    await deps.db.run(sql`update agents set lease_token = null, lease_run_id = null, lease_expires_at = null where id = 'default'`);
  }
};

describe("wake floor", () => {
  it("raises a sooner check to WAKE_MIN_DELAY_S and says so in the result", async () => {
    const deps = await createTestDeps();
    const out = await schedule(deps, { in_seconds: 1, reason: "look again" });
    const result = JSON.parse(out.content);
    expect(result.dueAt).toBe(new Date(deps.clock.now() + 60_000).toISOString());
    expect(result.note).toMatch(/raised to the minimum delay of 60s \(WAKE_MIN_DELAY_S\)/);
    const [wake] = await deps.db.select().from(wakes);
    expect(wake!.dueAt).toBe(deps.clock.now() + 60_000);
  });

  it("leaves a later check alone", async () => {
    const deps = await createTestDeps();
    const result = JSON.parse((await schedule(deps, { in_seconds: 600, reason: "later" })).content);
    expect(result.dueAt).toBe(new Date(deps.clock.now() + 600_000).toISOString());
    expect(result.note).toBeUndefined();
  });
});

describe("wake budget", () => {
  it("refuses past WAKES_PER_HOUR with a message the model can act on; cancelled wakes count; a slot frees after the hour", async () => {
    const deps = await createTestDeps({ vars: { WAKES_PER_HOUR: "3" } });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = JSON.parse((await schedule(deps, { in_seconds: 300, reason: `check ${i}` })).content);
      expect(r.checksLeftThisHour).toBe(2 - i);
      ids.push(r.wakeId);
      deps.clock.advance(60_000);
    }
    await cancelWake(deps, "default", ids[0]!);
    const refused = await schedule(deps, { in_seconds: 300, reason: "one more" });
    expect(refused.mutated).toBe(false);
    expect(JSON.parse(refused.content).error).toMatch(
      /wake budget exhausted: you scheduled 3 checks in the last hour \(WAKES_PER_HOUR=3\); the next can be scheduled after 2026-01-01T01:00:00.000Z\. Do not retry now/,
    );
    expect(await deps.db.select().from(wakes)).toHaveLength(3);

    deps.clock.set(Date.UTC(2026, 0, 1, 1, 0, 0, 1));
    expect(JSON.parse((await schedule(deps, { in_seconds: 300, reason: "after the hour" })).content).wakeId).toBeGreaterThan(0);
  });

  it("does not count wakes nobody's run created (the API, the simulation)", async () => {
    const deps = await createTestDeps({ vars: { WAKES_PER_HOUR: "1" } });
    const { createWake } = await import("../../pipeline/index.ts");
    await createWake(deps, "default", { dueAt: deps.clock.now() + 1000, reason: "external", createdByRun: null });
    expect(JSON.parse((await schedule(deps, { in_seconds: 300, reason: "mine" })).content).wakeId).toBeGreaterThan(0);
  });

  it("the rules policy obeys the same budget: a re-check it cannot schedule is said, not forced", async () => {
    const { deps } = await agentFixture({ vars: { WAKES_PER_HOUR: "1" }, instances: 2 });
    await setInstanceState(deps, "sim-1", "exited");
    await setInstanceState(deps, "sim-2", "exited");
    const run = await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });
    expect(run.decider).toBe("rules");
    expect(await deps.db.select().from(wakes)).toHaveLength(1);
    const { messages } = await import("../../schema/index.ts");
    const notes = (await deps.db.select().from(messages)).map((m) => m.content).join("\n");
    expect(notes).toMatch(/could not schedule a re-check of sim-2: wake budget exhausted/);
  });
});

describe("a self-rescheduling LLM", () => {
  it("asking for a check in 1 s on every run gets one run per minute, not one every few seconds", async () => {
    const llm = await scriptedLlm();
    for (let i = 0; i < 40; i++) {
      llm.push({ tools: [{ name: "schedule_next_check", arguments: { in_seconds: 1, reason: "keep watching" } }] }, { text: "scheduled" });
    }
    const { deps } = await agentFixture({ llm });
    await trigger(deps, { source: "manual", payload: { reason: "start" } });
    const start = deps.clock.now();
    for (let t = 0; t < 40; t++) {
      deps.clock.advance(1000);
      await deliverDue(deps);
    }
    const ran = (await deps.db.select().from(runs)).filter((r) => r.startedAt > start);
    // 40 s of simulated time: without the floor this was a run every few seconds.
    expect(ran.length).toBeLessThanOrEqual(1);
    expect((await deps.db.select().from(wakes)).length).toBeGreaterThanOrEqual(1); // it did schedule
  });
});
