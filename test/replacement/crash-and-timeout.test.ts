/**
 * What no crash or slow host may do to a replacement: a crash between the provider's create and
 * its record never leads to a second create (the new instance is adopted by its marker label); a
 * crash after `creating` was written but before create was called creates nothing later and
 * fails to a human at the deadline (a second create could rent twice: never guessed); a new
 * instance that never runs is destroyed, a human told once, and nothing is tried again.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actions, notifications } from "../../schema/index.ts";
import { SIM_BOOT_MS } from "../../fleet/providers/simulator-offers.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { deadFleet, decide, ruleRun, rows, tick } from "./support.ts";

/** The simulator, with its create counted and followed (or preceded) by a crash. */
function crashingCreate(deps: TestDeps, sim: SimulatorProvider, when: "after" | "before") {
  const counter = { calls: 0, crashes: 1 };
  const create = sim.create.bind(sim);
  sim.create = async (offer, spec) => {
    counter.calls++;
    if (when === "before" && counter.crashes-- > 0) throw new Error("host process killed before the request left");
    const created = await create(offer, spec);
    if (when === "after" && counter.crashes-- > 0) throw new Error("host process killed after create returned");
    return created;
  };
  deps.provider = sim;
  return counter;
}

const newRentals = async (sim: SimulatorProvider) => (await sim.list()).filter((i) => i.id.startsWith("sim-on-"));
const failureNotices = async (deps: TestDeps) =>
  (await deps.db.select().from(notifications)).filter((n) => n.title.startsWith("Replacement of sim-1 failed"));

describe("replacement under crashes and timeouts", () => {
  it("a crash between create and its record: one create, the instance adopted by its marker, the flow finishes", async () => {
    const { deps, sim } = await deadFleet();
    const counter = crashingCreate(deps, sim, "after");
    await ruleRun(deps);
    await decide(deps, "approve");
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting"); // the create, crashing after it returned
    const [row] = await rows(deps);
    expect(row).toMatchObject({ status: "creating", newInstanceId: null });
    expect(row!.createAttemptedAt).not.toBeNull();

    expect((await tick(deps)).steps).toEqual([{ id: row!.id, outcome: "adopted" }]);
    deps.clock.advance(SIM_BOOT_MS);
    await tick(deps);
    await tick(deps);
    expect(counter.calls).toBe(1);
    const [rented] = await newRentals(sim);
    expect((await rows(deps))[0]).toMatchObject({ status: "done", newInstanceId: rented!.id });
    expect(await sim.get("sim-1")).toBeNull();
  });

  it("a crash after `creating` was written, before create was called: nothing is created later; a human is told at the deadline", async () => {
    const { deps, sim } = await deadFleet();
    const counter = crashingCreate(deps, sim, "before");
    await ruleRun(deps);
    await decide(deps, "approve");
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting"); // the create, crashing before it left
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting");
    deps.clock.advance(deps.config.loadingTimeoutMs);
    expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
    await tick(deps);
    expect(counter.calls).toBe(1);
    expect(await newRentals(sim)).toEqual([]);
    expect((await rows(deps))[0]).toMatchObject({ status: "failed" });
    expect((await rows(deps))[0]!.error).toMatch(/no instance carries its marker/);
    expect(await failureNotices(deps)).toHaveLength(1);
    expect(await sim.get("sim-1")).not.toBeNull(); // the old one is never destroyed for nothing
  });

  it("a new instance that never runs is destroyed, a human is told once, and nothing is tried again", async () => {
    const { deps, sim } = await deadFleet();
    await ruleRun(deps);
    await decide(deps, "approve");
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    const [row] = await rows(deps);
    await sim.injectFailure(row!.newInstanceId!, "stuck_loading");
    deps.clock.advance(SIM_BOOT_MS);
    expect((await tick(deps)).steps[0]!.outcome).toBe("waiting");
    deps.clock.advance(deps.config.loadingTimeoutMs);
    expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
    expect(await sim.get(row!.newInstanceId!)).toBeNull();
    expect(await sim.get("sim-1")).not.toBeNull();
    const destroys = await deps.db.select().from(actions).where(eq(actions.kind, "destroy"));
    expect(destroys.map((a) => a.instanceId)).toEqual([row!.newInstanceId]);

    await tick(deps);
    await ruleRun(deps, 120);
    await ruleRun(deps, 3600);
    expect(await rows(deps)).toHaveLength(1);
    expect(await newRentals(sim)).toEqual([]);
    expect(await failureNotices(deps)).toHaveLength(1);
  });
});
