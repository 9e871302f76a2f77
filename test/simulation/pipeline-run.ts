/**
 * The pipeline simulation test, registered by each shard file (two files, so both cores work).
 * A failing seed prints the command that replays it.
 */
import { describe, expect, it } from "vitest";
import { simulate } from "./driver.ts";
import { pipelineSeeds } from "./seeds.ts";

async function runPipelineSeeds(seeds: number[]): Promise<void> {
  let runs = 0;
  let faults = 0;
  let poisoned = 0;
  let absorbed = 0;
  for (const seed of seeds) {
    const result = await simulate(seed);
    if (result.violations.length) {
      expect.fail(
        `seed ${seed} broke an invariant:\n  ${result.violations.join("\n  ")}\nreplay: SIM_SEED=${seed} npx vitest run test/simulation`,
      );
    }
    runs += result.runs;
    faults += result.faults;
    poisoned += result.poisoned;
    absorbed += result.absorbed;
  }
  // the scenarios must actually exercise the pipeline: faults, poison drops and absorbed requests included
  expect(runs).toBeGreaterThanOrEqual(seeds.length);
  if (seeds.length > 20) {
    expect(faults).toBeGreaterThan(0);
    expect(poisoned).toBeGreaterThan(0);
    expect(absorbed).toBeGreaterThan(0);
  }
}

export function pipelineSimulationShard(shard: number, shards: number): void {
  const seeds = pipelineSeeds(shard, shards);
  describe(`trigger pipeline simulation, shard ${shard + 1} of ${shards} (${seeds.length} seeds)`, () => {
    it.skipIf(seeds.length === 0)("holds every invariant after every step", { timeout: 600_000 }, () => runPipelineSeeds(seeds));
  });
}
