/**
 * Runs the eval: every situation in its own world (eval/world.ts), its setup unscored, its steps
 * scored (eval/score.ts), and a total. The decider is whatever the variables configure: the
 * rules policy without an LLM, else the model behind OPENAI_BASE_URL.
 */
import { SITUATIONS } from "./situations.ts";
import type { Situation } from "./situation.ts";
import { openWorld, runStep } from "./world.ts";
import { decisionsSince, judge, llmUse, type SituationResult } from "./score.ts";

export interface EvalReport {
  /** "rules policy", or the model's name. */
  decider: string;
  results: SituationResult[];
  passed: number;
  total: number;
  /** Passed situations as a share of all, 0-100. */
  score: number;
}

export async function runEval(
  options: { llmVars?: Record<string, string>; situations?: readonly Situation[]; onResult?: (r: SituationResult) => void } = {},
): Promise<EvalReport> {
  const situations = options.situations ?? SITUATIONS;
  const results: SituationResult[] = [];
  let decider = "rules policy";
  for (const situation of situations) {
    const world = await openWorld(situation, options.llmVars ?? {});
    if (world.deps.config.llm) decider = world.deps.config.llm.model;
    for (const step of situation.setup ?? []) await runStep(world, step);
    const from = world.deps.clock.now();
    for (const step of situation.steps) await runStep(world, step);
    const fleet = Array.from({ length: situation.instances ?? 2 }, (_, i) => `sim-${i + 1}`);
    const decisions = await decisionsSince(world.deps.db, "default", from, fleet);
    const result = { ...judge(situation, decisions, from), ...(await llmUse(world.deps.db, "default", from)) };
    results.push(result);
    options.onResult?.(result);
  }
  const passed = results.filter((r) => r.pass).length;
  return { decider, results, passed, total: results.length, score: Math.round((passed / Math.max(1, results.length)) * 100) };
}
