/**
 * The smallest CONTEXT_BUDGET_TOKENS a run can work with: the system prompt and the tool schemas
 * are sent with every LLM call, measured here with the agent's own tokenizer, plus a working
 * margin for the fleet snapshot, memory and this run's input. A smaller budget would make every
 * run fall back to the rules policy, so both hosts refuse it at start.
 */
import { SYSTEM_PROMPT } from "../../agent/prompt.ts";
import { countPrompt } from "../../agent/tokens.ts";
import { CHAT_TOOLS } from "../../agent/tools/index.ts";
import { ConfigError, type Config } from "../../runtime/config.ts";

export const WORKING_MARGIN_TOKENS = 1000;

export function minimumContextBudget(): { minimum: number; fixed: number } {
  const fixed = countPrompt([{ role: "system", content: SYSTEM_PROMPT }], CHAT_TOOLS);
  return { minimum: fixed + WORKING_MARGIN_TOKENS, fixed };
}

export function checkContextBudget(config: Config): void {
  const { minimum, fixed } = minimumContextBudget();
  if (config.contextBudgetTokens < minimum) {
    throw new ConfigError(
      "CONTEXT_BUDGET_TOKENS",
      `is ${config.contextBudgetTokens}; the minimum is ${minimum} (system prompt and tool schemas ${fixed} + working margin ${WORKING_MARGIN_TOKENS})`,
    );
  }
}
