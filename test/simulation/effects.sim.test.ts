/**
 * The effects simulation (effects-driver.ts): fenced effects and bounded retries under two
 * concurrent connections, a stalling provider and a misbehaving LLM. SIM_EFFECTS_SEEDS sets
 * the count; a failing seed prints the command that replays it.
 */
import { describe, expect, it } from "vitest";
import { simulateEffects } from "./effects-driver.ts";

const seeds = process.env.SIM_SEED
  ? [Number(process.env.SIM_SEED)]
  : Array.from({ length: Number(process.env.SIM_EFFECTS_SEEDS ?? 100) }, (_, i) => i + 1);

describe(`effects simulation (${seeds.length} seeds)`, () => {
  it("no run writes after its lease or another run's claim; nothing is attempted past the limit; turns only for runs that did something", {
    timeout: 600_000,
  }, async () => {
    let runs = 0;
    let late = 0;
    let stalls = 0;
    let poisoned = 0;
    let economics = 0;
    for (const seed of seeds) {
      const result = await simulateEffects(seed);
      if (result.violations.length) {
        expect.fail(
          `seed ${seed} broke an invariant:\n  ${result.violations.slice(0, 5).join("\n  ")}\nreplay: SIM_SEED=${seed} npx vitest run test/simulation/effects.sim.test.ts`,
        );
      }
      runs += result.runs;
      late += result.lateAnswers;
      stalls += result.stalls;
      poisoned += result.poisoned;
      economics += result.economics;
    }
    // the scenarios must exercise what they check
    expect(runs).toBeGreaterThanOrEqual(seeds.length);
    if (seeds.length >= 50) {
      expect(late).toBeGreaterThan(0);
      expect(stalls).toBeGreaterThan(0);
      expect(poisoned).toBeGreaterThan(0);
      // the economics rules (once-notices, idle stops, destroy requests) acted
      expect(economics).toBeGreaterThan(0);
    }
  });
});
