/**
 * The action-table simulation (action-table-driver.ts): actions asked by the LLM's tools, rules,
 * operators and approvals under shadow mode, a daily spend limit, a human's rejections and runs
 * that concern some instances only. In shadow mode nothing but a human reaches the provider; over
 * the limit nothing adds spend without a human (a start, a replacement, or a reboot of a stopped
 * or exited instance, which starts billing again); a rejected action is neither acted nor asked again
 * inside its cooldown unless a human asks; an action on an unconcerned instance never acts
 * without a human. SIM_ACTION_SEEDS sets the count (default 8); SIM_SEED replays one.
 */
import { describe, expect, it } from "vitest";
import { simulateActionTable } from "./action-table-driver.ts";
import { noneExercised, type Exercised } from "./action-table-observer.ts";

const single = process.env.SIM_SEED ? [Number(process.env.SIM_SEED)] : null;
const seeds = single ?? Array.from({ length: Number(process.env.SIM_ACTION_SEEDS ?? 8) }, (_, i) => 700_000 + i);

describe(`action-table simulation (${seeds.length} seeds)`, () => {
  it("shadow, the spend limit, a human's rejection and the blast radius hold for every asker", { timeout: 300_000 }, async () => {
    const total: Exercised = noneExercised();
    const broken: string[] = [];
    for (const seed of seeds) {
      const result = await simulateActionTable(seed);
      if (result.violations.length) {
        broken.push(
          `seed ${seed} (${result.shadow ? "shadow" : "act"}, spend limit ${result.spendLimit ?? "none"}): ${result.violations[0]}\n  replay: SIM_SEED=${seed} npx vitest run test/simulation/action-table.sim.test.ts`,
        );
      }
      for (const key of Object.keys(total) as (keyof Exercised)[]) total[key] += result.exercised[key];
    }
    if (broken.length) expect.fail(`${broken.length} of ${seeds.length} seeds broke an invariant:\n${broken.join("\n")}`);
    // Non-vacuous: every gate's situation arose, and actions did happen with and without a human.
    if (!single) {
      for (const key of Object.keys(total) as (keyof Exercised)[]) expect(total[key], key).toBeGreaterThan(0);
    }
  });
});
