/**
 * Attack: an agent with an instance filter replaces a dead rental with one its own filter does not
 * claim (the create carried only the replacement's marker label), so the agent can neither see,
 * supervise nor destroy what it rented: the new instance bills unwatched, and at the loading
 * deadline the replacement's own destroy of it is refused as "not this agent's".
 * Guard: the scoped provider (fleet/providers/scoped-provider.ts) labels every rental so the
 * filter claims it (`fw-own:<agent>:` for an ids filter, the prefix of a label filter); the
 * replacement finds its marker and relabels within the filter; reconciliation records the new
 * instance from the first tick after the create.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { instances } from "../../schema/index.ts";
import { SIM_BOOT_MS } from "../../fleet/providers/simulator-offers.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { AFTER_S, deadFleet, decide, rows } from "../replacement/support.ts";
import { scopedDeps, scopedTick, setSettings } from "./support.ts";

async function filteredDeath(filter: Record<string, unknown>) {
  const fx = await deadFleet();
  await setSettings(fx.deps, "default", { instanceFilter: filter });
  fx.deps.clock.advance(AFTER_S * 1000 + 1);
  const scoped = await scopedDeps(fx.deps);
  const proposal = await proposeReplacement(scoped, { agentId: "default", runId: null, decidedBy: "rules" }, "sim-1");
  expect(proposal).toMatchObject({ status: "proposed", result: { status: "awaiting_approval" } });
  await decide(fx.deps, "approve");
  return fx;
}

const stored = async (deps: Awaited<ReturnType<typeof deadFleet>>["deps"], id: string) =>
  (
    await deps.db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, "default"), eq(instances.id, id)))
  )[0];

describe("a rental made by a filtered agent is its own", () => {
  it("ids filter: the new instance is labelled fw-own:<agent>:, seen, recorded, and the replacement finishes", async () => {
    const { deps, sim } = await filteredDeath({ ids: ["sim-1", "sim-2"] });
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("created");
    const [row] = await rows(deps);
    const newId = row!.newInstanceId!;
    expect((await sim.get(newId))!.label).toBe(`fw-own:default:${row!.marker}`);
    const scoped = await scopedDeps(deps);
    expect((await scoped.provider.list()).map((i) => i.id)).toContain(newId);

    // Supervised from its first minute: the next reconciliation records it as the agent's.
    await reconcileFleet(scoped, "default");
    expect(await stored(deps, newId)).toMatchObject({ id: newId, state: "loading" });

    deps.clock.advance(SIM_BOOT_MS);
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("done");
    expect(await sim.get("sim-1")).toBeNull();
    // The old one's label, kept inside the filter.
    expect(await sim.get(newId)).toMatchObject({ state: "running", label: "fw-own:default:trainer-1" });
    expect(await (await scopedDeps(deps)).provider.get(newId)).not.toBeNull();
  });

  it("ids filter: a rental that does not come up in time is destroyed by the agent, not left billing", async () => {
    const { deps, sim } = await filteredDeath({ ids: ["sim-1", "sim-2"] });
    await scopedTick(deps);
    const [row] = await rows(deps);
    await sim.injectFailure(row!.newInstanceId!, "host_offline");
    deps.clock.advance(deps.config.loadingTimeoutMs + 1);
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("failed");
    expect(await sim.get(row!.newInstanceId!)).toBeNull();
    expect((await rows(deps))[0]!.error).toMatch(/was destroyed/);
  });

  it("label filter: the rental carries the agent's prefix", async () => {
    const { deps, sim } = await filteredDeath({ labelPrefix: "trainer" });
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("created");
    const [row] = await rows(deps);
    expect((await sim.get(row!.newInstanceId!))!.label).toBe(`trainer${row!.marker}`);
    deps.clock.advance(SIM_BOOT_MS);
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("done");
    expect(await sim.get(row!.newInstanceId!)).toMatchObject({ state: "running", label: "trainer-1" });
  });
});
