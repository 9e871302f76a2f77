import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { flagSilentInstances } from "../support/one-check.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import type { InstanceState } from "../../fleet/providers/provider.ts";
import { events, instanceEvents, instances } from "../../schema/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { injectSimulatorFailure } from "../../fleet/providers/simulator-reports.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";

const MINUTE = 60_000;
let hook = 0;

function report(deps: TestDeps, instanceId: string, state: InstanceState, source: "webhook" | "reconcile" = "webhook") {
  return recordInstanceState(deps, { agentId: "default", instanceId, state, source, dedupKey: `${source}:${++hook}` });
}

async function heartbeatEvents(deps: TestDeps) {
  return deps.db
    .select()
    .from(events)
    .where(and(eq(events.agentId, "default"), eq(events.source, "heartbeat")))
    .orderBy(events.id);
}

describe("heartbeat check", () => {
  it("an instance that reports by webhook and goes silent past HEARTBEAT_TIMEOUT_S becomes exactly one event", async () => {
    const deps = await createTestDeps({ vars: { HEARTBEAT_TIMEOUT_S: "300" } });
    await report(deps, "i-1", "running");
    deps.clock.advance(5 * MINUTE);
    expect(await flagSilentInstances(deps, "default")).toEqual([]);
    deps.clock.advance(1_000);
    expect(await flagSilentInstances(deps, "default")).toEqual(["i-1"]);
    deps.clock.advance(10 * MINUTE);
    expect(await flagSilentInstances(deps, "default")).toEqual([]);

    const flagged = await heartbeatEvents(deps);
    expect(flagged).toEqual([expect.objectContaining({ priority: 1, status: "pending" })]);
    expect(flagged[0]!.payload).toMatchObject({ instanceId: "i-1", state: "running", heartbeatMissed: true, silentForS: 301 });
    const history = await deps.db.select().from(instanceEvents).where(eq(instanceEvents.source, "heartbeat"));
    expect(history).toEqual([
      expect.objectContaining({ instanceId: "i-1", eventId: flagged[0]!.id, message: expect.stringMatching(/no report for 301s/) }),
    ]);
  });

  it("a new report clears the flag, so the next silence is raised again", async () => {
    const deps = await createTestDeps();
    await report(deps, "i-1", "running");
    deps.clock.advance(6 * MINUTE);
    await flagSilentInstances(deps, "default");
    await report(deps, "i-1", "running"); // a heartbeat: same state, wakes nobody, clears the flag
    const [row] = await deps.db.select().from(instances);
    expect(row!.heartbeatFlaggedAt).toBeNull();
    deps.clock.advance(6 * MINUTE);
    expect(await flagSilentInstances(deps, "default")).toEqual(["i-1"]);
    expect(await heartbeatEvents(deps)).toHaveLength(2);
  });

  it("only instances expected to report are checked: never by webhook, stopped or exited, or gone ones are not late", async () => {
    const deps = await createTestDeps();
    await report(deps, "seen-by-reconcile", "running", "reconcile");
    await report(deps, "stopped", "stopped");
    await report(deps, "exited", "exited");
    await report(deps, "loading", "loading");
    await report(deps, "gone", "running");
    await deps.db.update(instances).set({ goneAt: deps.clock.now() }).where(eq(instances.id, "gone"));
    deps.clock.advance(60 * MINUTE);
    expect(await flagSilentInstances(deps, "default")).toEqual(["loading"]);
  });

  it("an instance's own heartbeat interval overrides the default", async () => {
    const deps = await createTestDeps({ vars: { HEARTBEAT_TIMEOUT_S: "3600" } });
    await report(deps, "fast", "running");
    await report(deps, "default-rate", "running");
    await deps.db.update(instances).set({ heartbeatS: 60 }).where(eq(instances.id, "fast"));
    deps.clock.advance(2 * MINUTE);
    expect(await flagSilentInstances(deps, "default")).toEqual(["fast"]);
  });

  it("runs from the cron tick: a simulated instance stuck loading stops heartbeating and is flagged", async () => {
    const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
    const sim = deps.provider as SimulatorProvider;
    await sim.seed(2);
    await runCronTick(deps); // reconciliation learns of both; sim-1 and sim-2 heartbeat from now on
    await injectSimulatorFailure(deps, "sim-1", "stuck_loading");
    for (let minute = 0; minute < 10; minute++) {
      deps.clock.advance(MINUTE);
      await runCronTick(deps);
    }
    expect((await heartbeatEvents(deps)).map((e) => (e.payload as { instanceId: string }).instanceId)).toEqual(["sim-1"]);
  });
});
