/**
 * The smallest context budget a run can work with: the system prompt and the tool schemas are sent
 * with every LLM call, measured here with the agent's own tokenizer, plus a working margin for the
 * fleet snapshot, memory and this run's input. A smaller budget would make every run fall back to
 * the rules policy, so the hosts refuse such a CONTEXT_BUDGET_TOKENS at start
 * (functions/host/context-budget.ts) and the agents API and form refuse such a per-agent
 * `contextBudgetTokens` (jobs/agent-admin-requests.ts): one minimum for both.
 */
import { SYSTEM_PROMPT } from "../agent/prompt/prompt.ts";
import { countPrompt } from "../agent/prompt/tokens.ts";
import { CHAT_TOOLS } from "../agent/tools/index.ts";

export const WORKING_MARGIN_TOKENS = 1000;

let measured: { minimum: number; fixed: number } | undefined;

/** The minimum and its fixed part; measured once per process (the prompt and tools are constants). */
export function minimumContextBudget(): { minimum: number; fixed: number } {
  if (!measured) {
    const fixed = countPrompt([{ role: "system", content: SYSTEM_PROMPT }], CHAT_TOOLS);
    measured = { minimum: fixed + WORKING_MARGIN_TOKENS, fixed };
  }
  return measured;
}

/** Why a budget is too small to work with, or null when it is enough. */
export function contextBudgetProblem(budget: number): string | null {
  const { minimum, fixed } = minimumContextBudget();
  if (budget >= minimum) return null;
  return `is ${budget}; the minimum is ${minimum} (system prompt and tool schemas ${fixed} + working margin ${WORKING_MARGIN_TOKENS})`;
}
