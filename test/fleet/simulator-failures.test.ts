import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { FAILURES, ROLLED_FAILURE_KINDS } from "../../fleet/providers/simulated-failures.ts";
import { simulateFleet } from "../support/one-check.ts";
import { events, instances, simulatorInstances } from "../../schema/index.ts";
import { createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";

/** mulberry32: a seeded uniform source, so random failures are reproducible. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function simulated(count: number, options: { random?: () => number; rate?: string } = {}) {
  const base = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: options.rate ?? "2" } });
  const provider = new SimulatorProvider(base.db, base.clock, options.random ?? seeded(1));
  await provider.seed(count);
  return { deps: { ...base, provider }, provider };
}

describe("simulator: scripted failures", () => {
  it("each kind puts the instance in the state a real instance would show", async () => {
    const { provider } = await simulated(4);
    const expected = {
      exit: ["exited", /exited/],
      oom: ["exited", /CUDA out of memory/],
      stuck_loading: ["loading", /loading/],
      host_offline: ["offline", /offline/],
    } as const;
    for (const [i, kind] of ROLLED_FAILURE_KINDS.entries()) {
      const failed = await provider.injectFailure(`sim-${i + 1}`, kind);
      expect(failed?.state).toBe(expected[kind][0]);
      expect(failed?.statusMessage).toMatch(expected[kind][1]);
      expect(await provider.get(`sim-${i + 1}`)).toEqual(failed);
    }
    expect(await provider.injectFailure("sim-99", "exit")).toBeNull();
  });

  it("actions answer like the real provider: start clears a failure, destroy removes it from the list", async () => {
    const { provider } = await simulated(2);
    await provider.injectFailure("sim-1", "oom");
    await provider.start("sim-1");
    expect(await provider.get("sim-1")).toMatchObject({ state: "running" });
    await provider.destroy("sim-2");
    expect((await provider.list()).map((i) => i.id)).toEqual(["sim-1"]);
    expect(await provider.injectFailure("sim-2", "exit")).toBeNull();
  });
});

describe("simulator: random failures", () => {
  it("the first roll only opens the window; later rolls fail instances at the configured rate, deterministically per seed", async () => {
    async function scenario(seed: number) {
      const { provider, deps } = await simulated(20, { random: seeded(seed) });
      expect(await provider.rollFailures(2)).toEqual([]);
      deps.clock.advance(30 * 60_000);
      return provider.rollFailures(2);
    }
    const first = await scenario(7);
    const again = await scenario(7);
    // Half an hour at 2/h: p = 1 - e^-1 ≈ 0.63 per instance; 20 instances almost surely give 3..19.
    expect(first.length).toBeGreaterThan(3);
    expect(first.length).toBeLessThan(20);
    expect(again).toEqual(first);
    for (const { kind, instance } of first) expect(instance.state).toBe(FAILURES[kind].state);
  });

  it("time already rolled is never rolled again, and rate 0 rolls and writes nothing", async () => {
    const calls: number[] = [];
    let roll = 1; // 1 ≥ any p: a roll happens but nothing fails; 0 < any positive p: every roll fails
    const counting = () => (calls.push(1), roll);
    const { provider, deps } = await simulated(3, { random: counting });
    await provider.rollFailures(2); // first sighting: the windows start, nothing is rolled
    deps.clock.advance(60_000);
    const quiet = await deps.db.select().from(simulatorInstances);
    expect(await provider.rollFailures(0)).toEqual([]);
    expect(calls).toEqual([]);
    expect(await deps.db.select().from(simulatorInstances)).toEqual(quiet);
    expect(await provider.rollFailures(2)).toEqual([]);
    const rolls = calls.length;
    expect(rolls).toBe(3);
    roll = 0;
    expect(await provider.rollFailures(2)).toEqual([]); // same instant: nothing left to roll
    expect(calls.length).toBe(rolls);
    deps.clock.advance(60_000);
    expect((await provider.rollFailures(2)).length).toBe(3);
  });

  it("the cron check reports a random failure to the agent as a webhook would, which requests a run", async () => {
    const { deps, provider } = await simulated(1, { random: () => 0 });
    await simulateFleet(deps, "default");
    deps.clock.advance(60_000);
    await simulateFleet(deps, "default");
    const [sim] = await provider.list();
    expect(ROLLED_FAILURE_KINDS.map((k) => FAILURES[k].state)).toContain(sim!.state);
    const rows = await deps.db.select().from(events).where(eq(events.agentId, "default"));
    expect(rows).toEqual([expect.objectContaining({ source: "webhook", priority: 1, status: "pending" })]);
    const [seen] = await deps.db.select().from(instances);
    expect(seen).toMatchObject({ id: "sim-1", state: sim!.state, reportsByWebhook: true });
    expect((deps.scheduler as RecordingScheduler).published.map((p) => p.body.type)).toEqual(["run"]);
  });

  it("healthy instances heartbeat on each tick; a failed one stops", async () => {
    const { deps, provider } = await simulated(2, { rate: "0" });
    // fleetwarden learns of both as running (as a report would say)
    await provider.injectFailure("sim-2", "exit");
    await provider.start("sim-2");
    for (const id of ["sim-1", "sim-2"]) {
      await deps.db.insert(instances).values({ agentId: "default", id, state: "running", stateAt: 0, lastSeenAt: 0, updatedAt: 0 });
    }
    await provider.injectFailure("sim-2", "stuck_loading");
    await simulateFleet(deps, "default");
    const rows = await deps.db.select().from(instances).orderBy(instances.id);
    expect(rows.map((r) => [r.id, r.lastSeenAt, r.reportsByWebhook])).toEqual([
      ["sim-1", deps.clock.now(), true],
      ["sim-2", 0, false],
    ]);
  });
});
