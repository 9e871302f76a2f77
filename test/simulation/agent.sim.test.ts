/**
 * The pipeline simulation with the real agent in every run, driven by a simulated LLM (tool
 * calls, malformed calls, 500s, slow answers past the lease) under a small context budget:
 * the pipeline invariants hold, every LLM request is within budget with its tool pairs intact,
 * and no call trims stored turns it did not first try to summarise (compaction-checks.ts).
 * SIM_AGENT_SEEDS (default 150) sets the count; SIM_SEED replays one.
 */
import { describe, expect, it } from "vitest";
import { simulate } from "./driver.ts";

const single = process.env.SIM_SEED ? [Number(process.env.SIM_SEED)] : null;
const count = Number(process.env.SIM_AGENT_SEEDS ?? 150);
const seeds = single ?? Array.from({ length: count }, (_, i) => 100_000 + i);

describe(`agent simulation (${seeds.length} seeds)`, () => {
  it("holds the pipeline, budget and compaction invariants with a misbehaving LLM", { timeout: 600_000 }, async () => {
    let requests = 0;
    let compacted = 0;
    let summarized = 0;
    for (const seed of seeds) {
      const result = await simulate(seed, 60, "agent");
      if (result.violations.length) {
        expect.fail(
          `seed ${seed} broke an invariant:\n  ${result.violations.join("\n  ")}\nreplay: SIM_SEED=${seed} npx vitest run test/simulation/agent.sim.test.ts`,
        );
      }
      requests += result.llmRequests;
      compacted += result.compactedCalls;
      summarized += result.summarizedCalls;
    }
    // non-vacuous: the LLM was called, and the budget forced compaction (summaries too) along the way
    expect(requests).toBeGreaterThan(seeds.length);
    if (!single) {
      expect(compacted).toBeGreaterThan(0);
      expect(summarized).toBeGreaterThan(0);
    }
  });
});
