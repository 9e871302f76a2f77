/**
 * How health reports describe the LLM. Each agent has its own breaker per model
 * (agent/llm/breaker.ts llmBreakerName), so the LLM's health is an agent's: its model, whether that
 * model's breaker is open, and `misconfigured` while the server refuses its requests in a way
 * retries cannot fix (kept on the breaker row until a call succeeds). The deployment's /healthz
 * lists the agents in trouble (jobs/llm-trouble.ts) instead of blaming the default model.
 */
import { and, gt, isNotNull, like, or } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import { Breaker, llmBreakerName, parseLlmBreakerName } from "./breaker.ts";
import { breakers } from "../../schema/index.ts";

export interface AgentLlmHealth {
  model: string;
  failures: number;
  breakerOpenUntil: number | null;
  misconfigured: string | null;
}

/** The LLM as one agent sees it; deps scoped to the agent (its model). Null when none is configured. */
export async function agentLlmHealth(deps: Pick<AgentDeps, "db" | "clock" | "llm">, agentId: string): Promise<AgentLlmHealth | null> {
  if (!deps.llm) return null;
  const breaker = new Breaker(deps, llmBreakerName(agentId, deps.llm.model));
  const [state, breakerOpenUntil] = await Promise.all([breaker.state(), breaker.openUntil()]);
  return { model: deps.llm.model, failures: state.failures, breakerOpenUntil, misconfigured: state.misconfigured };
}

/** Breaker rows of any agent and model that are open now or keep a misconfiguration. */
export async function troubledLlmBreakers(deps: Pick<AgentDeps, "db" | "clock">): Promise<Array<{ agentId: string; model: string }>> {
  const rows = await deps.db
    .select({ name: breakers.name })
    .from(breakers)
    .where(and(like(breakers.name, "llm:%"), or(gt(breakers.openUntil, deps.clock.now()), isNotNull(breakers.misconfigured))));
  return rows.flatMap((r) => parseLlmBreakerName(r.name) ?? []);
}
