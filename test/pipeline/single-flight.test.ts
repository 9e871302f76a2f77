import { describe, expect, it } from "vitest";
import { ingestEvent } from "../../pipeline/index.ts";
import { listRuns } from "../../pipeline/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";
import { deliverDue, startDueDelivery } from "../support/drive.ts";
import { GatedStep } from "../support/gated-step.ts";

const human = (n: number) => ({
  agentId: "default",
  source: "human" as const,
  priority: 0 as const,
  dedupKey: `m${n}`,
  payload: { text: `m${n}` },
});

async function eventStatuses(deps: Awaited<ReturnType<typeof createTestDeps>>) {
  const rs = await deps.db.$client.execute("select id, status, run_id from events order by id");
  return rs.rows.map((r) => ({ id: Number(r.id), status: String(r.status), runId: r.run_id === null ? null : Number(r.run_id) }));
}

describe("single-flight runs", () => {
  it("events during a run wait for it, then exactly one follow-up run consumes them", async () => {
    const gated = new GatedStep();
    const deps = await createTestDeps({ runStep: gated.step });
    const scheduler = deps.scheduler as RecordingScheduler;
    await ingestEvent(deps, human(1));
    deps.clock.advance(2000);
    const running = (await startDueDelivery(deps)).done;
    expect(gated.started).toHaveLength(1);

    for (let i = 2; i <= 6; i++) await ingestEvent(deps, human(i));
    deps.clock.advance(2000);
    expect(await deliverDue(deps)).toEqual(["busy"]); // the lease is held: re-published for its expiry
    expect(gated.started).toHaveLength(1);

    gated.open();
    expect(await running).toBe("succeeded");
    // finishing published exactly one follow-up, due now
    const due = scheduler.published.filter((p) => p.notBefore <= deps.clock.now());
    expect(due).toHaveLength(1);
    const followUp = (await startDueDelivery(deps)).done;
    gated.open();
    expect(await followUp).toBe("succeeded");

    const runs = await listRuns(deps, "default", 10);
    expect(runs.map((r) => r.runId)).toEqual([2, 1]);
    expect(runs[0]!.triggers.map((t) => t.id)).toEqual([2, 3, 4, 5, 6]);
    // the delivery re-published for the lease expiry is stale now
    deps.clock.advance(deps.config.runLeaseMs);
    expect(await deliverDue(deps)).toEqual(["stale"]);
    expect(await listRuns(deps, "default", 10)).toHaveLength(2);
  });

  it("a run that dies is marked crashed when its lease expires and its events are re-claimed", async () => {
    const gated = new GatedStep();
    const deps = await createTestDeps({ runStep: gated.step });
    await ingestEvent(deps, human(1));
    deps.clock.advance(2000);
    await startDueDelivery(deps); // never opened: the run "dies"
    expect((await eventStatuses(deps))[0]).toMatchObject({ status: "consumed", runId: 1 });

    deps.clock.advance(deps.config.runLeaseMs);
    const report = await runCronTick(deps);
    expect(report[0]).toMatchObject({ recoveredLease: true });
    expect((await eventStatuses(deps))[0]).toMatchObject({ status: "pending", runId: null });

    const next = (await startDueDelivery(deps)).done;
    gated.open(); // opens the dead run's gate first: its finish must change nothing
    gated.open();
    expect(await next).toBe("succeeded");
    const runs = await listRuns(deps, "default", 10);
    expect(runs.map((r) => [r.runId, r.status])).toEqual([
      [2, "succeeded"],
      [1, "crashed"],
    ]);
    expect(runs[0]!.triggers.map((t) => t.id)).toEqual([1]);
    expect((await eventStatuses(deps))[0]).toMatchObject({ status: "consumed", runId: 2 });
  });

  it("the next claim recovers a dead lease itself, without waiting for the cron tick", async () => {
    const gated = new GatedStep();
    const deps = await createTestDeps({ runStep: gated.step });
    await ingestEvent(deps, human(1));
    deps.clock.advance(2000);
    await startDueDelivery(deps);
    await ingestEvent(deps, human(2));
    deps.clock.advance(2000);
    expect(await deliverDue(deps)).toEqual(["busy"]);
    deps.clock.advance(deps.config.runLeaseMs);
    const recovered = (await startDueDelivery(deps)).done;
    gated.open();
    gated.open();
    expect(await recovered).toBe("succeeded");
    const runs = await listRuns(deps, "default", 10);
    expect(runs.map((r) => r.status)).toEqual(["succeeded", "crashed"]);
    expect(runs[0]!.triggers.map((t) => t.id)).toEqual([1, 2]);
  });

  it("a failed run hands its events back and schedules a retry that consumes them", async () => {
    const gated = new GatedStep();
    const deps = await createTestDeps({ runStep: gated.step });
    const scheduler = deps.scheduler as RecordingScheduler;
    await ingestEvent(deps, human(1));
    deps.clock.advance(2000);
    gated.failNext = "database is locked";
    const failing = (await startDueDelivery(deps)).done;
    gated.open();
    expect(await failing).toBe("failed");
    expect((await eventStatuses(deps))[0]).toMatchObject({ status: "pending", runId: null });
    expect(scheduler.published).toHaveLength(1);

    deps.clock.advance(deps.config.debounceStateMs);
    const retry = (await startDueDelivery(deps)).done;
    gated.open();
    expect(await retry).toBe("succeeded");
    const runs = await listRuns(deps, "default", 10);
    expect(runs.map((r) => [r.runId, r.status])).toEqual([
      [2, "succeeded"],
      [1, "failed"],
    ]);
    expect(runs[1]!.error).toBe("database is locked");
  });

  it("a no-op run publishes nothing", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    await ingestEvent(deps, { agentId: "default", source: "webhook", priority: 1, dedupKey: "w1", payload: {} });
    deps.clock.advance(10_000);
    expect(await deliverDue(deps)).toEqual(["succeeded"]);
    const [run] = await listRuns(deps, "default", 1);
    expect(run!.noop).toBe(true);
    expect(scheduler.published).toHaveLength(0);
  });

  it("a duplicate delivery of a claimed slot does nothing", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    await ingestEvent(deps, human(1));
    deps.clock.advance(2000);
    const [delivery] = scheduler.takeDue(deps.clock.now());
    expect(await handleDelivery(deps, delivery!.body)).toBe("succeeded");
    expect(await handleDelivery(deps, delivery!.body)).toBe("stale");
    expect(await listRuns(deps, "default", 5)).toHaveLength(1);
  });
});
