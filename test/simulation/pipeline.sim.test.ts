/**
 * Runs the pipeline simulation over many seeds (SIM_SEEDS, default 1000; SIM_SEED replays one).
 * A failing seed prints the command that replays it.
 */
import { describe, expect, it } from "vitest";
import { simulate } from "./driver.ts";

const single = process.env.SIM_SEED ? [Number(process.env.SIM_SEED)] : null;
const count = Number(process.env.SIM_SEEDS ?? 1000);
const seeds = single ?? Array.from({ length: count }, (_, i) => i + 1);

describe(`trigger pipeline simulation (${seeds.length} seeds)`, () => {
  it("holds every invariant after every step", { timeout: 600_000 }, async () => {
    let runs = 0;
    let faults = 0;
    for (const seed of seeds) {
      const result = await simulate(seed);
      if (result.violations.length) {
        const replay = `SIM_SEED=${seed} npx vitest run test/simulation`;
        expect.fail(`seed ${seed} broke an invariant:\n  ${result.violations.join("\n  ")}\nreplay: ${replay}`);
      }
      runs += result.runs;
      faults += result.faults;
    }
    // the scenarios must actually exercise the pipeline, faults included
    expect(runs).toBeGreaterThan(seeds.length);
    if (!single) expect(faults).toBeGreaterThan(0);
  });
});
