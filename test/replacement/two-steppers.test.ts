/**
 * Two steppers on one replacement row (issue #32): overlapping ticks (or any second caller of
 * stepReplacement) with the same snapshot of the row must not create twice, and must not both
 * finish it in opposite ways. The race that existed: at the deadline, one stepper saw the new
 * instance still loading and timed out (destroying the NEW one) while the other saw it running
 * and finished (destroying the OLD one): both gone. Each destructive step now first claims the
 * row (waiting → finishing, waiting → failed), so only one of them acts. And a create slower than
 * the deadline, while another stepper failed the row for want of its marker, left its rental
 * running with nobody looking after it; it is now destroyed when its create returns.
 */
import { describe, expect, it } from "vitest";
import { SIM_BOOT_MS } from "../../fleet/providers/simulator-offers.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { stepReplacement } from "../../fleet/replacement/replacement.ts";
import { deadFleet, decide, ruleRun, rows, tick } from "./support.ts";

const newRentals = async (sim: SimulatorProvider) => (await sim.list()).filter((i) => i.id.startsWith("sim-on-"));

async function approved() {
  const { deps, sim } = await deadFleet();
  await ruleRun(deps);
  await decide(deps, "approve");
  return { deps, sim };
}

describe("two steppers on one replacement", () => {
  it("approved: two concurrent steps with a slow create rent once", async () => {
    const { deps, sim } = await approved();
    const counter = { creates: 0 };
    const create = sim.create.bind(sim);
    sim.create = async (offer, spec) => {
      counter.creates++;
      await new Promise((r) => setTimeout(r, 50));
      return create(offer, spec);
    };
    const [row] = await rows(deps);
    expect(row!.status).toBe("approved");
    const outcomes = await Promise.all([stepReplacement(deps, row!), stepReplacement(deps, row!), tick(deps)]);
    expect(counter.creates).toBe(1);
    expect(outcomes.slice(0, 2).sort()).toEqual(["created", "idle"]);
    expect(await newRentals(sim)).toHaveLength(1);
  });

  it("a create slower than the deadline, while a second stepper fails the row for want of its marker: the late rental is not left running untracked", async () => {
    const { deps, sim } = await approved();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const create = sim.create.bind(sim);
    sim.create = async (offer, spec) => {
      await held; // the request is still on its way: nothing carries the marker yet
      return create(offer, spec);
    };
    const [row] = await rows(deps);
    const first = stepReplacement(deps, row!);
    await new Promise((r) => setTimeout(r, 50));
    const [creating] = await rows(deps);
    expect(creating).toMatchObject({ status: "creating", newInstanceId: null });
    deps.clock.advance(creating!.deadlineAt! - deps.clock.now());
    expect(await stepReplacement(deps, creating!)).toBe("failed");
    release();
    await first;
    expect((await rows(deps))[0]).toMatchObject({ status: "failed" });
    expect(await newRentals(sim), "a rented instance nobody tracks").toEqual([]);
  });

  it("at the deadline, one stepper seeing it loading and one seeing it running: only one of them acts, never both instances destroyed", async () => {
    const { deps, sim } = await approved();
    await tick(deps); // the one create
    const [row] = await rows(deps);
    const newId = row!.newInstanceId!;
    deps.clock.advance(Math.max(SIM_BOOT_MS, row!.deadlineAt! - deps.clock.now()));
    // The instance finishes booting between the two steppers' reads: the first read still says loading.
    const get = sim.get.bind(sim);
    let reads = 0;
    sim.get = async (id) => {
      const fresh = await get(id);
      if (id === newId && fresh && reads++ === 0) return { ...fresh, state: "loading" };
      return fresh;
    };
    await Promise.all([stepReplacement(deps, row!), stepReplacement(deps, row!)]);
    await tick(deps);
    await tick(deps);

    const [after] = await rows(deps);
    const old = await sim.get("sim-1");
    const fresh = await sim.get(newId);
    expect(old === null && fresh === null, "both the old and the new instance were destroyed").toBe(false);
    if (after!.status === "done") expect(fresh).toMatchObject({ state: "running" });
    else expect(after).toMatchObject({ status: "failed" });
    if (after!.status === "failed") expect(old).not.toBeNull();
  });
});
