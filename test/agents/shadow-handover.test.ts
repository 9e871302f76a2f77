/**
 * The hand-over from shadow mode to acting (issue #33 item 4): paused, an instance breaks and the
 * rules policy only proposes its restart; resuming acting (POST /api/agents/:agent/mode, as the
 * dashboard's Resume acting does through the same job) writes one `mode` event naming the broken
 * instance and the proposal and requests exactly one run, in which the rules policy restarts it
 * with nobody asking in chat. Resuming an agent that is already acting writes and requests nothing.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createAgentRunStep } from "../../agent/run-agent.ts";
import { injectSimulatorFailure } from "../../fleet/providers/simulator-reports.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { listRuns } from "../../pipeline/index.ts";
import { actions, events } from "../../schema/index.ts";
import { deliverDue } from "../support/drive.ts";
import { authHeaders, createTestDeps, type RecordingScheduler, type TestDeps } from "../support/test-deps.ts";

const MINUTE = 60_000;

async function tick(deps: TestDeps, minutes = 1) {
  for (let i = 0; i < minutes; i++) {
    deps.clock.advance(MINUTE - deps.config.debounceStateMs);
    await runCronTick(deps);
    await deliverDue(deps);
    deps.clock.advance(deps.config.debounceStateMs);
    await deliverDue(deps);
  }
}

async function setup() {
  const deps = await createTestDeps({ runStep: createAgentRunStep(), vars: { SIMULATOR_FAILURE_RATE: "0" } });
  await (deps.provider as SimulatorProvider).seed(2);
  await tick(deps, 2);
  const app = buildApp(() => deps);
  const mode = async (m: string) => {
    const res = await app.request("/api/agents/default/mode", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ mode: m }),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const modeEvents = () => deps.db.select().from(events).where(eq(events.source, "mode"));
  const starts = () =>
    deps.db
      .select()
      .from(actions)
      .where(and(eq(actions.instanceId, "sim-1"), eq(actions.kind, "start")))
      .orderBy(actions.id);
  return { deps, mode, modeEvents, starts };
}

describe("resuming acting after shadow mode", () => {
  it("requests exactly one run whose event lists the broken instance and its proposal; the rules policy restarts it", async () => {
    const { deps, mode, modeEvents, starts } = await setup();
    expect(await mode("shadow")).toMatchObject({ previous: "act" });
    await injectSimulatorFailure(deps, "sim-1", "exit");
    await tick(deps, 2);
    const [proposal] = await starts();
    expect(proposal).toMatchObject({ status: "proposed", decidedBy: "rules" });
    expect(await modeEvents()).toEqual([]);
    const runsBefore = (await listRuns(deps, "default", 100)).length;

    expect(await mode("act")).toMatchObject({ previous: "shadow" });
    const [event] = await modeEvents();
    expect(event).toMatchObject({ priority: 0, status: "pending" });
    expect(event!.payload).toMatchObject({
      instances: [{ instanceId: "sim-1", state: "exited", why: "exited" }],
      proposals: [{ actionId: proposal!.id, instanceId: "sim-1", kind: "start", instanceState: "exited" }],
    });

    deps.clock.advance(deps.config.debounceHumanMs);
    await deliverDue(deps);
    const runs = await listRuns(deps, "default", 100);
    expect(runs.length - runsBefore).toBe(1);
    const [consumed] = await modeEvents();
    expect(consumed).toMatchObject({ status: "consumed", runId: runs[0]!.runId });
    // Nobody asked in chat: the run the hand-over requested restarted it.
    expect(await deps.db.select().from(events).where(eq(events.source, "human"))).toEqual([]);
    const restarted = (await starts()).filter((a) => a.status === "succeeded");
    expect(restarted).toHaveLength(1);
    expect(restarted[0]).toMatchObject({ decidedBy: "rules", runId: runs[0]!.runId });
  });

  it("resuming an agent that is already acting writes no event and requests no run", async () => {
    const { deps, mode, modeEvents } = await setup();
    const scheduler = deps.scheduler as RecordingScheduler;
    const published = scheduler.published.length;
    expect(await mode("act")).toMatchObject({ previous: "act" });
    expect(await mode("act")).toMatchObject({ previous: "act" });
    expect(await modeEvents()).toEqual([]);
    expect(scheduler.published.length).toBe(published);
  });

  it("a second resume of the same pause (after a new pause it is a new one) hands over once per pause", async () => {
    const { deps, mode, modeEvents } = await setup();
    await mode("shadow");
    await mode("act");
    await mode("act");
    expect(await modeEvents()).toHaveLength(1);
    deps.clock.advance(1000);
    await mode("shadow");
    await mode("act");
    expect(await modeEvents()).toHaveLength(2);
  });
});
