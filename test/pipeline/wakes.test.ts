import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { cancelWake, createWake, WakeLimitError } from "../../pipeline/index.ts";
import { listRuns } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { authHeaders, createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";
import { advance, deliverDue } from "../support/drive.ts";
import { handleDelivery } from "../../jobs/deliver.ts";

describe("wakes", () => {
  it("a wake due in 2 s is consumed by exactly one run, started at its due time, and by none after it", async () => {
    const deps = await createTestDeps();
    const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 2000, reason: "check sim-1", createdByRun: null });
    expect(await advance(deps, 1000)).toEqual([]);
    // Due: the run is requested for the due time, not a state-change debounce window later.
    expect(await advance(deps, 1000)).toEqual(["requested", "succeeded"]);
    const runs = await listRuns(deps, "default", 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.wakesConsumed).toEqual([wake.id]);
    expect(Date.parse(String(runs[0]!.startedAt))).toBe(wake.dueAt);

    // later runs do not see it again
    const { ingestEvent } = await import("../../pipeline/index.ts");
    await ingestEvent(deps, { agentId: "default", source: "manual", priority: 0, dedupKey: "t1", payload: {} });
    await advance(deps, 2000);
    const after = await listRuns(deps, "default", 10);
    expect(after).toHaveLength(2);
    expect(after[0]!.wakesConsumed).toEqual([]);
  });

  it("a due wake whose delivery went missing is requested by the cron tick", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    await createWake(deps, "default", { dueAt: deps.clock.now() + 5000, reason: "lost delivery", createdByRun: 3 });
    scheduler.takeDue(Number.MAX_SAFE_INTEGER); // the delivery is lost
    deps.clock.advance(60_000);
    const [report] = await runCronTick(deps);
    expect(report).toMatchObject({ requestedRun: true });
    // Already late: the repair asks for the run now, without a debounce window on top.
    expect(await deliverDue(deps)).toEqual(["succeeded"]);
    const [run] = await listRuns(deps, "default", 1);
    expect(run!.wakesConsumed).toHaveLength(1);
  });

  it("a burst of wakes due together makes one run, and a state change pending beside them rides along", async () => {
    const deps = await createTestDeps();
    const dueAt = deps.clock.now() + 60_000;
    const ids = [];
    for (let i = 0; i < 5; i++)
      ids.push((await createWake(deps, "default", { dueAt: dueAt + i * 100, reason: `w${i}`, createdByRun: null })).id);
    const { ingestEvent } = await import("../../pipeline/index.ts");
    deps.clock.advance(59_000);
    await ingestEvent(deps, { agentId: "default", source: "webhook", priority: 1, dedupKey: "state-1", payload: {} });
    // Every wake is delivered together (the slot's dedup absorbs all but the first's request).
    deps.clock.advance(1000 + 400);
    const results = await deliverDue(deps);
    expect(results.filter((r) => r === "succeeded")).toHaveLength(1);
    expect(results.filter((r) => r === "requested")).toHaveLength(5);
    const runs = await listRuns(deps, "default", 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.wakesConsumed).toEqual(ids);
    expect(runs[0]!.triggers).toHaveLength(1);
    // The state change's own debounced delivery finds its slot superseded: no second run.
    expect(await advance(deps, deps.config.debounceStateMs)).toEqual(["stale"]);
    expect(await listRuns(deps, "default", 10)).toHaveLength(1);
  });

  it("at most MAX_PENDING_WAKES pending wakes, with a clear error beyond; cancelling frees a place", async () => {
    const deps = await createTestDeps({ vars: { MAX_PENDING_WAKES: "3" } });
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await createWake(deps, "default", { dueAt: deps.clock.now() + 60_000, reason: `w${i}`, createdByRun: null })).id);
    const over = createWake(deps, "default", { dueAt: deps.clock.now() + 60_000, reason: "one too many", createdByRun: null });
    await expect(over).rejects.toThrow(WakeLimitError);
    await expect(over).rejects.toThrow(/at most 3 pending wakes/);
    expect(await cancelWake(deps, "default", ids[0]!)).toBe(true);
    expect(await cancelWake(deps, "default", ids[0]!)).toBe(false);
    await expect(
      createWake(deps, "default", { dueAt: deps.clock.now() + 60_000, reason: "fits again", createdByRun: null }),
    ).resolves.toBeTruthy();
  });

  it("a cancelled wake starts no run", async () => {
    const deps = await createTestDeps();
    const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 1000, reason: "never mind", createdByRun: null });
    await cancelWake(deps, "default", wake.id);
    expect(await advance(deps, 1000)).toEqual(["gone"]);
    expect(await advance(deps, 60_000)).toEqual([]);
    expect(await listRuns(deps, "default", 5)).toHaveLength(0);
  });

  it("GET /wakes lists them with their status filter", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const a = await createWake(deps, "default", { dueAt: deps.clock.now() + 1000, reason: "soon", createdByRun: 7 });
    await createWake(deps, "default", { dueAt: deps.clock.now() + 999_000, reason: "later", createdByRun: 7 });
    await advance(deps, 1000);
    await advance(deps, 10_000);
    const consumed = await (await app.request("/api/agents/default/wakes?status=consumed", { headers: authHeaders() })).json();
    expect(consumed.wakes).toEqual([
      {
        id: a.id,
        dueAt: new Date(a.dueAt).toISOString(),
        reason: "soon",
        status: "consumed",
        createdByRun: 7,
        consumedByRun: 1,
        attempts: 0,
        dropReason: null,
      },
    ]);
    const pending = await (await app.request("/api/agents/default/wakes?status=pending", { headers: authHeaders() })).json();
    expect(pending.wakes.map((w: { reason: string }) => w.reason)).toEqual(["later"]);
    const bad = await app.request("/api/agents/default/wakes?status=done", { headers: authHeaders() });
    expect(bad.status).toBe(400);
    expect(await deliverDue(deps)).toEqual([]);
  });
});

describe("a run with nothing left to consume", () => {
  it("is recorded skipped, without calling the run step", async () => {
    let steps = 0;
    const deps = await createTestDeps({
      runStep: async () => {
        steps++;
        return { decider: "none", mutated: false, reply: null, promptTokens: 0, completionTokens: 0, contextTokens: 0, compaction: null };
      },
    });
    const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 1000, reason: "due soon", createdByRun: null });
    deps.clock.advance(1000);
    const scheduler = deps.scheduler as RecordingScheduler;
    const [wakeDelivery] = scheduler.takeDue(deps.clock.now());
    expect(await handleDelivery(deps, wakeDelivery!.body)).toBe("requested"); // the due wake asks for its run
    expect(await cancelWake(deps, "default", wake.id)).toBe(true); // and is cancelled before that run is delivered
    expect(await deliverDue(deps)).toEqual(["skipped"]);
    expect(steps).toBe(0);
    const [run] = await listRuns(deps, "default", 1);
    expect(run).toMatchObject({ runId: 1, status: "skipped", noop: true, triggers: [], wakesConsumed: [] });
    expect((deps.scheduler as RecordingScheduler).published).toHaveLength(0);
  });
});
