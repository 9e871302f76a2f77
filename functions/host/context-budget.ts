/**
 * Start-up refusal of a CONTEXT_BUDGET_TOKENS below the minimum a run can work with (the minimum
 * is measured in jobs/context-budget.ts, the same one the agents API applies per agent).
 */
import { contextBudgetProblem } from "../../jobs/context-budget.ts";
import { ConfigError, type Config } from "../../runtime/config.ts";

export { minimumContextBudget, WORKING_MARGIN_TOKENS } from "../../jobs/context-budget.ts";

export function checkContextBudget(config: Config): void {
  const problem = contextBudgetProblem(config.contextBudgetTokens);
  if (problem) throw new ConfigError("CONTEXT_BUDGET_TOKENS", problem);
}
