/**
 * No echo (invariant 10): the state change the agent's own action causes is recorded in the
 * instance history but wakes nobody (drop reason `expected`); a deviation, or the expectation
 * expiring unmet, is an event as any other change.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { executeAction } from "../../fleet/actions/actions.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { raiseOverdueStates, reconcileFleet } from "../support/one-check.ts";
import { events, instanceEvents, instances } from "../../schema/index.ts";
import { fleetFixture } from "../actions/fleet-fixture.ts";
import type { TestDeps } from "../support/test-deps.ts";

const reboot = (runId = 1) => ({
  agentId: "default",
  runId,
  instanceId: "sim-1",
  kind: "reboot" as const,
  decidedBy: "llm" as const,
  idempotencyKey: `reboot-${runId}`,
  reason: "stuck",
});

const report = (deps: TestDeps, state: "loading" | "running" | "exited", key: string) =>
  recordInstanceState(deps, { agentId: "default", instanceId: "sim-1", state, source: "webhook", dedupKey: key });

const pending = (deps: TestDeps) => deps.db.select().from(events).where(eq(events.status, "pending"));
const instance = async (deps: TestDeps) => (await deps.db.select().from(instances).where(eq(instances.id, "sim-1")))[0]!;

describe("no echo", () => {
  it("a report on the way to the expected state and the state itself wake nobody, and stay in the history", async () => {
    const { deps, scheduler } = await fleetFixture();
    expect((await executeAction(deps, reboot())).status).toBe("succeeded");
    expect(await instance(deps)).toMatchObject({ state: "rebooting", expectedState: "running", expectedUntil: deps.clock.now() + 900_000 });

    deps.clock.advance(20_000);
    expect((await report(deps, "loading", "w1")).outcome).toBe("expected");
    expect((await instance(deps)).expectedState).toBe("running"); // still on the way
    deps.clock.advance(20_000);
    expect((await report(deps, "running", "w2")).outcome).toBe("expected");

    expect(await pending(deps)).toEqual([]);
    expect(scheduler.published).toEqual([]);
    expect(await instance(deps)).toMatchObject({ state: "running", expectedState: null, expectedUntil: null });
    const history = await deps.db.select().from(instanceEvents).where(eq(instanceEvents.instanceId, "sim-1")).orderBy(instanceEvents.id);
    expect(history.map((h) => [h.source, h.toState])).toEqual([
      ["action", "rebooting"],
      ["webhook", "loading"],
      ["webhook", "running"],
    ]);
    const dropped = await deps.db.select().from(events).where(eq(events.dropReason, "expected"));
    expect(dropped).toHaveLength(2);
  });

  it("reconciliation seeing the rebooted instance running is the echo, not a new event", async () => {
    const { deps, scheduler } = await fleetFixture({ SIMULATOR_FAILURE_RATE: "0" });
    await executeAction(deps, reboot());
    deps.clock.advance(61_000);
    const reconciled = await reconcileFleet(deps, "default");
    expect(reconciled.changed).toEqual(["sim-1"]);
    expect(await pending(deps)).toEqual([]);
    expect(scheduler.published).toEqual([]);
    expect((await instance(deps)).state).toBe("running");
  });

  it("a deviation from the expectation is an event and ends the expectation", async () => {
    const { deps } = await fleetFixture();
    await executeAction(deps, reboot());
    deps.clock.advance(30_000);
    expect((await report(deps, "exited", "w1")).outcome).toBe("pending");
    expect(await instance(deps)).toMatchObject({ state: "exited", expectedState: null });
    deps.clock.advance(30_000);
    expect((await report(deps, "running", "w2")).outcome).toBe("pending"); // no expectation left
  });

  it("an expectation that expires unmet is one event; a met one expires silently", async () => {
    const { deps } = await fleetFixture();
    await executeAction(deps, reboot()); // stored `rebooting`; the instance never reports again
    await executeAction(deps, { ...reboot(2), instanceId: "sim-2", kind: "start", idempotencyKey: "start-2" }); // implied running: met
    deps.clock.advance(899_000);
    expect(await raiseOverdueStates(deps, "default")).toEqual([]);
    deps.clock.advance(2_000);
    expect(await raiseOverdueStates(deps, "default")).toEqual(["sim-1"]);
    expect(await raiseOverdueStates(deps, "default")).toEqual([]);
    const raised = await pending(deps);
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({ source: "overdue", priority: 1 });
    expect(raised[0]!.payload).toMatchObject({ instanceId: "sim-1", state: "rebooting", overdue: "expectation", expectedState: "running" });
    const rows = await deps.db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, "default")));
    expect(rows.every((r) => r.expectedState === null)).toBe(true);
  });

  it("an expectation does not outlive its deadline: a late report is an event", async () => {
    const { deps } = await fleetFixture();
    await executeAction(deps, reboot());
    deps.clock.advance(901_000);
    expect((await report(deps, "running", "late")).outcome).toBe("pending");
  });
});
