/**
 * The orphan sweep (fleet/leases/orphans.ts, unclaimed.ts; issue 35 item 3) on real libSQL and the
 * simulated account shared by two agents with instance filters: an instance no filter claims is
 * told once per UTC day with its $/h (a second tick the same day: nothing; the next day: again);
 * only the account's sweeper lists, at most once per 10 minutes; at most 20 notices per tick;
 * ORPHANS=none does nothing; ORPHANS=stop files an approval, and approving it stops the instance
 * through the whole account (the agent's scoped provider alone would refuse it); an instance under a
 * lease whose owner no longer exists is told as an orphan.
 */
import { describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { agents, leases, notifications, simulatorInstances } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { ensureAgent, runTickCheck } from "../../pipeline/index.ts";
import { checkOrphans, ORPHAN_LIST_EVERY_MS, ORPHAN_NOTICES_PER_TICK, type OrphanReport } from "../../fleet/leases/orphans.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

/** `default` claims trainer-1 by label, `zeta` claims sim-2 by id; sim-3 … sim-N nobody claims. */
async function setup(count: number, orphans?: "none" | "tell" | "stop") {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
  const sim = deps.provider as SimulatorProvider;
  await sim.seed(count);
  await ensureAgent(deps.db, "zeta", deps.clock.now());
  await deps.db
    .update(agents)
    .set({ settings: { instanceFilter: { labelPrefix: "trainer-1" }, ...(orphans ? { orphans } : {}) } })
    .where(eq(agents.id, "default"));
  await deps.db
    .update(agents)
    .set({ settings: { instanceFilter: { ids: ["sim-2"] } } })
    .where(eq(agents.id, "zeta"));
  const list = vi.spyOn(sim, "list");
  return { deps, sim, list };
}

async function tick(deps: TestDeps, agentId = "default"): Promise<OrphanReport> {
  const scope = await withAgent(deps, agentId);
  return runTickCheck<OrphanReport, TestDeps>(scope!.deps as TestDeps, agentId, checkOrphans);
}

const told = async (deps: TestDeps) => (await deps.db.select().from(notifications)).map((n) => `${n.title} | ${n.body}`);

describe("the orphan sweep", () => {
  it("tells an unclaimed instance once a day with its $/h: nothing again the same day, again the next day", async () => {
    const { deps } = await setup(3);
    const first = await tick(deps);
    expect(first).toMatchObject({ listed: "listed", told: [{ instanceId: "sim-3", why: "unclaimed", costPerHour: 19.6 }] });
    const said = await told(deps);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("Orphan instance sim-3 costs $19.60/h");
    expect(said[0]).toContain("no agent's instance filter claims it");

    deps.clock.advance(ORPHAN_LIST_EVERY_MS); // listed again, the same day: not told again
    expect(await tick(deps)).toMatchObject({ listed: "listed", told: [] });
    expect(await told(deps)).toHaveLength(1);

    deps.clock.advance(DAY);
    expect(await tick(deps)).toMatchObject({ listed: "listed", told: [{ instanceId: "sim-3" }] });
    expect(await told(deps)).toHaveLength(2);
  });

  it("lists the account at most once per 10 minutes, and only from the account's sweeper", async () => {
    const { deps, list } = await setup(3);
    await tick(deps);
    expect(list).toHaveBeenCalledTimes(1);
    deps.clock.advance(ORPHAN_LIST_EVERY_MS - MIN);
    expect(await tick(deps)).toMatchObject({ listed: "listed recently", told: [] });
    expect(list).toHaveBeenCalledTimes(1);
    // The other agent on the same account never lists: the first agent by id sweeps for all.
    expect(await tick(deps, "zeta")).toMatchObject({ listed: "not the sweeper", told: [] });
    expect(list).toHaveBeenCalledTimes(1);
    deps.clock.advance(MIN);
    expect(await tick(deps)).toMatchObject({ listed: "listed" });
    expect(list).toHaveBeenCalledTimes(2);
  });

  it("lists nothing when an agent claims the whole account", async () => {
    const { deps, list } = await setup(3);
    await deps.db.update(agents).set({ settings: {} }).where(eq(agents.id, "zeta"));
    expect(await tick(deps)).toMatchObject({ listed: "all claimed", told: [] });
    expect(list).not.toHaveBeenCalled();
  });

  it(`tells at most ${ORPHAN_NOTICES_PER_TICK} orphans per tick, the rest at the next list`, async () => {
    // 40 instances: `default` claims sim-1 and sim-10 … sim-19 (labels trainer-1…), `zeta` sim-2; 28 are unclaimed.
    const { deps } = await setup(40);
    const first = await tick(deps);
    expect(first.told).toHaveLength(ORPHAN_NOTICES_PER_TICK);
    expect(await told(deps)).toHaveLength(ORPHAN_NOTICES_PER_TICK);
    deps.clock.advance(ORPHAN_LIST_EVERY_MS);
    const second = await tick(deps);
    expect(second.told).toHaveLength(8);
    expect(new Set([...first.told, ...second.told].map((o) => o.instanceId)).size).toBe(28);
  });

  it("does nothing with ORPHANS=none", async () => {
    const { deps, list } = await setup(3, "none");
    expect(await tick(deps)).toMatchObject({ listed: "off", told: [] });
    expect(list).not.toHaveBeenCalled();
    expect(await told(deps)).toEqual([]);
  });

  it("ORPHANS=stop files an approval, and approving it stops the instance through the whole account", async () => {
    const { deps } = await setup(3, "stop");
    const report = await tick(deps);
    expect(report.stops).toMatchObject([{ instanceId: "sim-3", status: "awaiting_approval" }]);
    const approvalId = report.stops[0]!.approvalId!;
    // The agent's own provider refuses it: it is outside the filter.
    const scope = await withAgent(deps, "default");
    await expect(scope!.deps.provider.stop("sim-3")).rejects.toThrow(/not this agent's/);
    const state = async () => (await deps.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, "sim-3")))[0]!.state;
    expect(await state()).toBe("running");

    const decided = await decideApproval(scope!.deps, "default", approvalId, "approve", undefined, "ana");
    expect(decided.action).toMatchObject({ status: "succeeded" });
    expect(await state()).toBe("stopped");
    // The same day's next tick files nothing more.
    deps.clock.advance(ORPHAN_LIST_EVERY_MS);
    expect(await tick(deps)).toMatchObject({ told: [], stops: [] });
    // The next day it is told again (its storage still costs), but a stopped orphan is not asked about again.
    deps.clock.advance(DAY);
    const nextDay = await tick(deps);
    expect(nextDay).toMatchObject({ told: [{ instanceId: "sim-3", billing: false }], stops: [] });
  });

  it("tells an instance whose lease owner no longer exists, once a day", async () => {
    const { deps } = await setup(2);
    await deps.db.update(agents).set({ settings: {} }).where(eq(agents.id, "default"));
    await reconcileFleet((await withAgent(deps, "default"))!.deps, "default");
    const now = deps.clock.now();
    await deps.db.insert(leases).values({
      agentId: "default",
      instanceId: "sim-1",
      owner: "ghost",
      purpose: "eval run",
      endsAt: now + DAY,
      createdAt: now,
      updatedAt: now,
    });
    expect(await tick(deps)).toMatchObject({ told: [{ instanceId: "sim-1", why: "ownerless", owner: "ghost" }] });
    expect((await told(deps))[0]).toContain("whose owner ghost no longer exists");
    deps.clock.advance(MIN);
    expect(await tick(deps)).toMatchObject({ told: [] });
    deps.clock.advance(DAY);
    expect(await tick(deps)).toMatchObject({ told: [{ instanceId: "sim-1" }] });
  });
});
