/**
 * Attack: a human sees a replacement going wrong and presses pause (shadow mode); the replacement
 * already approved (by that human) goes on renting and destroying, because its steps were the
 * approver's and the shadow gate lets a human's action through.
 * Guard: the replacement stepper holds every in-flight step while the agent is in shadow mode
 * (fleet/replacement/replacement-hold.ts): no create, no destroy, no provider call; a human told
 * once per held stage; resuming continues from where it was held, the pause never timing out the
 * new instance.
 */
import { describe, expect, it } from "vitest";
import { tickAgent } from "../../jobs/tick.ts";
import { SIM_BOOT_MS } from "../../fleet/providers/simulator-offers.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { AFTER_S, deadFleet, decide, rows } from "../replacement/support.ts";
import { notices, scopedTick, setMode } from "./support.ts";

async function approvedReplacement() {
  const fx = await deadFleet();
  fx.deps.clock.advance(AFTER_S * 1000 + 1);
  await proposeReplacement(fx.deps, { agentId: "default", runId: null, decidedBy: "rules" }, "sim-1");
  await decide(fx.deps, "approve");
  return fx;
}

const held = async (deps: Awaited<ReturnType<typeof deadFleet>>["deps"]) => (await notices(deps)).filter((n) => /held/.test(n.title));

describe("pausing an agent holds its replacement in flight", () => {
  it("approved: nothing is rented while paused, told once; resumed, it rents", async () => {
    const { deps, sim } = await approvedReplacement();
    await setMode(deps, "default", "shadow");
    for (let i = 0; i < 3; i++) expect((await scopedTick(deps)).steps[0]!.outcome).toBe("held");
    expect(await sim.list()).toHaveLength(2);
    expect((await rows(deps))[0]).toMatchObject({ status: "approved", createAttemptedAt: null });
    const told = await held(deps);
    expect(told).toHaveLength(1);
    expect(told[0]!.body).toMatch(/before renting/);
    await tickAgent(deps, "default"); // the real tick, scoped by the agent's settings, holds it too
    expect(await sim.list()).toHaveLength(2);

    await setMode(deps, "default", "act");
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("created");
    expect(await sim.list()).toHaveLength(3);
  });

  it("waiting: neither the new nor the old instance is destroyed while paused, even past the loading timeout; resumed, it finishes", async () => {
    const { deps, sim } = await approvedReplacement();
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("created");
    const newId = (await rows(deps))[0]!.newInstanceId!;
    await setMode(deps, "default", "shadow");
    deps.clock.advance(SIM_BOOT_MS + deps.config.loadingTimeoutMs + 1);
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("held");
    deps.clock.advance(deps.config.loadingTimeoutMs);
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("held");
    expect(await sim.get("sim-1")).not.toBeNull();
    expect(await sim.get(newId)).toMatchObject({ state: "running" });
    expect((await held(deps)).map((n) => n.body)).toEqual([expect.stringMatching(/while the new instance loads/)]);

    await setMode(deps, "default", "act");
    expect((await scopedTick(deps)).steps[0]!.outcome).toBe("done");
    expect(await sim.get("sim-1")).toBeNull();
    expect(await sim.get(newId)).not.toBeNull();
  });
});
