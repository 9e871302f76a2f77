/**
 * A fan-out refused in this very invocation (QStash was fine at the last publish, so the health
 * record still says ok) makes the same cron invocation do the due runs itself: the fallback never
 * waits for the next invocation to read the failure back from the record. scheduled-tick.test.ts
 * covers the case where the record already says failing; this is the case it cannot see.
 */
import { describe, expect, it } from "vitest";
import { createAgent, ingestEvent, listRuns, MonitoredScheduler, readSchedulerHealth } from "../../pipeline/index.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { createTestDeps, FlakyScheduler } from "../support/test-deps.ts";

describe("a fan-out refused in this invocation", () => {
  it("the same invocation performs the due runs itself", async () => {
    const flaky = new FlakyScheduler();
    flaky.down = false;
    // No inline ticks: every agent (never reconciled) is fanned out, so the fan-out is this invocation's publish.
    const deps = await createTestDeps({
      scheduler: flaky,
      vars: { SIMULATOR_INSTANCES: "0", CRON_INLINE_AGENTS: "0", CRON_INLINE_RUNS: "5" },
    });
    await createAgent(deps.db, { id: "a1", settings: {} }, deps.clock.now());
    const monitored = { ...deps, scheduler: new MonitoredScheduler(flaky, deps) };
    for (const agentId of ["default", "a1"]) {
      await ingestEvent(monitored, { agentId, source: "human", priority: 0, dedupKey: `m-${agentId}`, payload: { text: "hi" } });
    }
    expect((await readSchedulerHealth(monitored)).ok).toBe(true);
    flaky.takeDue(Infinity); // the run deliveries went missing
    deps.clock.advance(deps.config.debounceHumanMs);

    flaky.down = true; // QStash starts refusing now, between the last publish and this invocation
    const report = await runScheduledTick(monitored);
    expect(report.fannedOut).toEqual([]);
    expect(report.schedulerFailing).toBe(true);
    expect(report.ran.map((r) => [r.agentId, r.result]).sort()).toEqual([
      ["a1", "succeeded"],
      ["default", "succeeded"],
    ]);
    for (const agentId of ["default", "a1"]) expect(await listRuns(deps, agentId, 5)).toHaveLength(1);
    expect((await readSchedulerHealth(monitored)).ok).toBe(false);
  });
});
