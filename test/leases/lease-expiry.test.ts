/**
 * Lease expiry (fleet/leases/lease-expiry.ts, issue 35 item 2) on real libSQL and the simulated
 * account, leases inserted directly: a lease that ran out is told once (naming its owner, her Slack
 * user, and the $/h), its instance is stopped after LEASE_GRACE_S and not before, through
 * the action table, and the stop is told; the lease ends `expired`. An extended lease is not told.
 * The bound: 21 expired leases, 20 handled on one tick and the last on the next. A lease whose
 * owner no longer exists is left to the orphan sweep. The check runs in the real tick (jobs/tick.ts).
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { createOperator } from "../../auth/operators-store.ts";
import { actions, leases, notifications, simulatorInstances } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { checkLeaseExpiry, LEASE_EXPIRIES_PER_TICK, type LeaseExpiryReport } from "../../fleet/leases/lease-expiry.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";

const S = 1000;

async function setup(instances: number, vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0", ...vars } });
  await (deps.provider as SimulatorProvider).seed(instances);
  await reconcileFleet(deps, "default");
  await createOperator(deps.db, { name: "ana", role: "operator", createdBy: "admin", now: deps.clock.now(), slackUserId: "U0ANA" });
  return deps;
}

async function lease(deps: TestDeps, instanceId: string, endsAt: number, owner = "ana") {
  const now = deps.clock.now();
  await deps.db.insert(leases).values({
    agentId: "default",
    instanceId,
    owner,
    client: "claude-code",
    purpose: "fine-tune llama",
    endsAt,
    createdAt: now,
    updatedAt: now,
  });
}

const tick = (deps: TestDeps) => runTickCheck<LeaseExpiryReport, TestDeps>(deps, "default", checkLeaseExpiry);
const told = async (deps: TestDeps) => (await deps.db.select().from(notifications)).map((n) => `${n.title} | ${n.body}`);
const simState = async (deps: TestDeps, id: string) =>
  (await deps.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, id)))[0]!.state;
const leaseRow = async (deps: TestDeps, id: string) =>
  (
    await deps.db
      .select()
      .from(leases)
      .where(and(eq(leases.agentId, "default"), eq(leases.instanceId, id)))
  )[0]!;

describe("lease expiry", () => {
  it("tells a lease that ran out once, stops its instance after the grace (not before), tells that, and ends the lease", async () => {
    const deps = await setup(1, { LEASE_GRACE_S: "600" });
    const endsAt = deps.clock.now() + 60 * S;
    await lease(deps, "sim-1", endsAt);

    expect(await tick(deps)).toEqual({ told: [], stopped: [], gone: [] });
    deps.clock.advance(61 * S);
    expect(await tick(deps)).toMatchObject({ told: ["sim-1"], stopped: [] });
    const first = await told(deps);
    expect(first).toHaveLength(1);
    expect(first[0]).toContain("ana's (Slack user U0ANA) through claude-code lease on instance sim-1 (fine-tune llama) ran out");
    expect(first[0]).toContain("$0.42/h");

    // Told once: later ticks inside the grace neither tell again nor stop.
    deps.clock.advance(300 * S);
    expect(await tick(deps)).toEqual({ told: [], stopped: [], gone: [] });
    deps.clock.set(endsAt + 599 * S);
    expect(await tick(deps)).toEqual({ told: [], stopped: [], gone: [] });
    expect(await simState(deps, "sim-1")).toBe("running");
    expect(await told(deps)).toHaveLength(1);

    deps.clock.set(endsAt + 600 * S);
    expect(await tick(deps)).toMatchObject({ told: [], stopped: [{ instanceId: "sim-1", status: "succeeded" }] });
    expect(await simState(deps, "sim-1")).toBe("stopped");
    const [action] = await deps.db.select().from(actions);
    expect(action).toMatchObject({ kind: "stop", decidedBy: "rules", instanceId: "sim-1", idempotencyKey: `lease-expiry:sim-1:${endsAt}` });
    expect(await leaseRow(deps, "sim-1")).toMatchObject({ endedAt: deps.clock.now(), endReason: "expired" });
    // The stop is told once, by its money-move notice: why (the lease) and what it saves.
    const after = await told(deps);
    expect(after).toHaveLength(2);
    expect(after[1]).toMatch(/^Stopped sim-1: saves \$/);
    expect(after[1]).toContain("the lease (ana, fine-tune llama) ran out");

    // Ended: nothing more, ever.
    const count = after.length;
    deps.clock.advance(3600 * S);
    expect(await tick(deps)).toEqual({ told: [], stopped: [], gone: [] });
    expect(await told(deps)).toHaveLength(count);
    expect(await deps.db.select().from(actions)).toHaveLength(1);
  });

  it("does not touch a lease extended before it ran out", async () => {
    const deps = await setup(1, { LEASE_GRACE_S: "0" });
    await lease(deps, "sim-1", deps.clock.now() + 60 * S);
    await deps.db.update(leases).set({ endsAt: deps.clock.now() + 3600 * S });
    deps.clock.advance(120 * S);
    expect(await tick(deps)).toEqual({ told: [], stopped: [], gone: [] });
    expect(await simState(deps, "sim-1")).toBe("running");
  });

  it(`handles at most ${LEASE_EXPIRIES_PER_TICK} expired leases per tick, the rest on the next`, async () => {
    const deps = await setup(21, { LEASE_GRACE_S: "0", ACTIONS_PER_HOUR: "100" });
    const now = deps.clock.now();
    for (let i = 1; i <= 21; i++) await lease(deps, `sim-${i}`, now - (22 - i) * S);
    const first = await tick(deps);
    expect(first.told).toHaveLength(20);
    expect(first.stopped).toHaveLength(20);
    expect(first.told).not.toContain("sim-21"); // soonest ended first
    const open = async () => (await deps.db.select().from(leases)).filter((l) => l.endedAt === null).map((l) => l.instanceId);
    expect(await open()).toEqual(["sim-21"]);
    expect(await simState(deps, "sim-21")).toBe("running");

    const second = await tick(deps);
    expect(second).toMatchObject({ told: ["sim-21"], stopped: [{ instanceId: "sim-21", status: "succeeded" }] });
    expect(await open()).toEqual([]);
    expect(await tick(deps)).toEqual({ told: [], stopped: [], gone: [] });
  });

  it("asks a human when stop is on the approval list, and says so", async () => {
    const deps = await setup(1, { LEASE_GRACE_S: "0", APPROVAL_REQUIRED_ACTIONS: "stop,destroy" });
    await lease(deps, "sim-1", deps.clock.now() - S);
    const report = await tick(deps);
    expect(report.stopped).toMatchObject([{ instanceId: "sim-1", status: "awaiting_approval" }]);
    expect(await simState(deps, "sim-1")).toBe("running");
    expect((await told(deps)).some((t) => t.includes("needs a human's approval to stop"))).toBe(true);
    expect((await leaseRow(deps, "sim-1")).endReason).toBe("expired");
  });

  it("leaves a lease whose owner no longer exists to the orphan sweep", async () => {
    const deps = await setup(1, { LEASE_GRACE_S: "0" });
    await lease(deps, "sim-1", deps.clock.now() - S, "ghost");
    expect(await tick(deps)).toEqual({ told: [], stopped: [], gone: [] });
    expect(await simState(deps, "sim-1")).toBe("running");
  });

  it("counts the ADMIN_TOKEN holder as an owner who exists", async () => {
    const deps = await setup(1, { LEASE_GRACE_S: "0" });
    await lease(deps, "sim-1", deps.clock.now() - S, "admin");
    expect(await tick(deps)).toMatchObject({ told: ["sim-1"], stopped: [{ instanceId: "sim-1", status: "succeeded" }] });
  });

  it("runs in the scheduled tick (FLEET_CHECKS)", async () => {
    const deps = await setup(1, { LEASE_GRACE_S: "0" });
    await lease(deps, "sim-1", deps.clock.now() - S);
    await runCronTick(deps);
    expect(await simState(deps, "sim-1")).toBe("stopped");
    expect((await leaseRow(deps, "sim-1")).endReason).toBe("expired");
  });
});
