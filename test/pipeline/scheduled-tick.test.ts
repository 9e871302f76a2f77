/**
 * The scheduled tick (jobs/scheduled-tick.ts): up to CRON_INLINE_AGENTS agents are ticked in the
 * invocation itself, only due agents beyond that are fanned out, and an agent with nothing due
 * publishes nothing. Bounds tested: the inline cap, the fan-out limited to due agents (and
 * deduplicated per minute), every due agent getting its inline turn, CRON_INLINE_RUNS runs per
 * invocation while the scheduler refuses.
 */
import { describe, expect, it } from "vitest";
import { archiveAgent, chooseInline, createAgent, ingestEvent, listRuns, MonitoredScheduler } from "../../pipeline/index.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { createTestDeps, FlakyScheduler, type RecordingScheduler } from "../support/test-deps.ts";
import { deliverDue } from "../support/drive.ts";

const HOUR = 3_600_000;

async function withAgents(ids: string[], vars: Record<string, string> = {}, scheduler?: RecordingScheduler) {
  const deps = await createTestDeps({ vars: { SIMULATOR_INSTANCES: "0", ...vars }, ...(scheduler ? { scheduler } : {}) });
  for (const id of ids) await createAgent(deps.db, { id, settings: {} }, deps.clock.now());
  return deps;
}

describe("the scheduled tick runs ticks inline and fans out only what is due beyond its budget", () => {
  it("ticks up to CRON_INLINE_AGENTS agents itself and publishes a tick only for the due agents left over", async () => {
    const deps = await withAgents(["a1", "a2", "a3", "gone"], { CRON_INLINE_AGENTS: "2" });
    await archiveAgent(deps.db, "gone", deps.clock.now());
    const scheduler = deps.scheduler as RecordingScheduler;

    // Never reconciled: every agent is due. Two are ticked here, two fanned out; none for "gone".
    const first = await runScheduledTick(deps);
    expect(first.inline).toHaveLength(2);
    expect([...first.inline, ...first.fannedOut].sort()).toEqual(["a1", "a2", "a3", "default"]);
    expect(scheduler.published.map((p) => p.body)).toEqual(first.fannedOut.map((agentId) => ({ type: "tick", agentId })));
    // The same minute again: the fanned-out agents are still due, and the minute's dedup key holds.
    await runScheduledTick(deps);
    expect(scheduler.published).toHaveLength(2);
    await deliverDue(deps);

    // Everyone reconciled, nothing pending: an hour of invocations publishes nothing at all.
    for (let minute = 0; minute < 59; minute++) {
      deps.clock.advance(60_000);
      const report = await runScheduledTick({ ...deps, config: { ...deps.config, reconcileIntervalMs: HOUR } });
      expect(report).toMatchObject({ fannedOut: [], ran: [], schedulerFailing: false });
    }
    expect(scheduler.published).toHaveLength(0);
  });

  it("an agent with pending work beyond the inline places is fanned out; idle ones are not", async () => {
    const deps = await withAgents(["a1", "a2"], { CRON_INLINE_AGENTS: "0", RECONCILE_INTERVAL_S: "3600" });
    const scheduler = deps.scheduler as RecordingScheduler;
    await runScheduledTick(deps); // first sight: all reconcile-due, all fanned out
    await deliverDue(deps);
    deps.clock.advance(60_000);
    await ingestEvent(deps, { agentId: "a2", source: "human", priority: 0, dedupKey: "m1", payload: { text: "hi" } });
    scheduler.takeDue(Infinity); // its run's delivery went missing
    deps.clock.advance(2_000);
    expect((await runScheduledTick(deps)).fannedOut).toEqual([]); // a run is scheduled: its delivery's job, not the tick's
    deps.clock.advance(60_000); // now the scheduled run is overdue by a minute: the tick must repair it
    expect((await runScheduledTick(deps)).fannedOut).toEqual(["a2"]);
  });

  it("with more due agents than inline places, each due agent gets its inline tick in turn", () => {
    const due = ["a", "b", "c", "d", "e"].map((agentId) => ({ agentId, reasons: ["reconcile" as const] }));
    const idle = [{ agentId: "z", reasons: [] }];
    const seen = new Map<string, number>();
    for (let minute = 0; minute < 5; minute++) {
      const { inline, fanOut } = chooseInline([...due, ...idle], 2, minute);
      expect(inline).toHaveLength(2);
      expect(fanOut).toHaveLength(3);
      expect(fanOut).not.toContain("z");
      for (const id of inline) seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    expect([...seen.values()].sort()).toEqual([2, 2, 2, 2, 2]);
    // Inline places left over go to agents with nothing due; those are never fanned out.
    expect(chooseInline([due[0]!, ...idle], 5, 7)).toEqual({ inline: ["a", "z"], fanOut: [] });
  });
});

describe("while the scheduler refuses publishes, the cron invocation does the due work itself", () => {
  it("performs due runs, at most CRON_INLINE_RUNS per invocation, oldest first, and stops once publishes work", async () => {
    const flaky = new FlakyScheduler();
    const deps = await withAgents(["a1", "a2"], { CRON_INLINE_RUNS: "2" }, flaky);
    const monitored = { ...deps, scheduler: new MonitoredScheduler(flaky, deps) };
    for (const agentId of ["a2", "default", "a1"]) {
      await ingestEvent(monitored, { agentId, source: "human", priority: 0, dedupKey: `m-${agentId}`, payload: { text: "hi" } });
      deps.clock.advance(10);
    }
    deps.clock.advance(2_000);

    const first = await runScheduledTick(monitored);
    expect(first.schedulerFailing).toBe(true);
    expect(first.ran.map((r) => [r.agentId, r.result])).toEqual([
      ["a2", "succeeded"],
      ["default", "succeeded"],
    ]);
    deps.clock.advance(60_000);
    expect((await runScheduledTick(monitored)).ran.map((r) => [r.agentId, r.result])).toEqual([["a1", "succeeded"]]);
    for (const agentId of ["a1", "a2", "default"]) expect(await listRuns(deps, agentId, 5)).toHaveLength(1);

    // QStash takes publishes again: the probe clears the record; the next invocation runs nothing itself.
    flaky.down = false;
    deps.clock.advance(60_000);
    expect(await runScheduledTick(monitored)).toMatchObject({ schedulerFailing: true, ran: [] });
    expect(flaky.published.map((p) => p.dedupKey)).toEqual([`probe:${Math.floor(deps.clock.now() / 60_000)}`]);
    deps.clock.advance(60_000);
    expect(await runScheduledTick(monitored)).toMatchObject({ schedulerFailing: false, ran: [] });
  });
});
