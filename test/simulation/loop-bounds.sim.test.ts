/**
 * The loop-bounds simulation (invariants 10-12): a misbehaving LLM that re-schedules itself
 * every run, re-requests what a human rejected and acts on every instance it sees, with a
 * provider that reports the effects of its actions. No echo, the wake floor and budget, and a
 * human's "no" hold after every step. SIM_LOOP_SEEDS (default 8) sets the count; SIM_SEED
 * replays one.
 */
import { describe, expect, it } from "vitest";
import { simulateEffects } from "./loop-bounds-driver.ts";

const single = process.env.SIM_SEED ? [Number(process.env.SIM_SEED)] : null;
const count = Number(process.env.SIM_LOOP_SEEDS ?? 8);
const seeds = single ?? Array.from({ length: count }, (_, i) => 500_000 + i);

describe(`loop-bounds simulation (${seeds.length} seeds)`, () => {
  it("no echo, budgeted self-wakes and a human's no hold with a misbehaving LLM", { timeout: 300_000 }, async () => {
    let runs = 0;
    let actions = 0;
    let decided = 0;
    let rejections = 0;
    let rulesInBlocks = 0;
    for (const seed of seeds) {
      const result = await simulateEffects(seed);
      if (result.violations.length) {
        expect.fail(
          `seed ${seed} broke an invariant:\n  ${result.violations.slice(0, 5).join("\n  ")}\nreplay: SIM_SEED=${seed} npx vitest run test/simulation/loop-bounds.sim.test.ts`,
        );
      }
      runs += result.runs;
      actions += result.actions;
      decided += result.decided;
      rejections += result.rejections;
      rulesInBlocks += result.rulesRunsInBlocks;
    }
    // non-vacuous: the agent ran, decided actions and some were carried out, and was told no; the
    // rules policy decided while a no held. The run and hour bounds (fleet/actions/bounds.ts) and the
    // unconcerned-instance rule turn most of what this LLM asks for into refusals and approval
    // requests, so fewer are carried out than it decides.
    expect(runs).toBeGreaterThan(seeds.length * 5);
    expect(decided).toBeGreaterThan(seeds.length * 2);
    expect(actions).toBeGreaterThan(0);
    expect(rejections).toBeGreaterThan(seeds.length);
    if (!single) expect(rulesInBlocks).toBeGreaterThan(0);
  });
});
