/**
 * Read model of one agent's health: the loop watchdog's open conditions as of the last cron tick,
 * and its LLM now — the model it uses and that model's own breaker (open until, failures,
 * misconfiguration). Another agent's failing model never shows here. GET /api/agents/:agent/health
 * answers with it, and the attention strip counts from the same read. Takes the whole Deps because
 * the agent's own model is found through its scope (jobs/with-agent.ts). A database refusing for
 * its plan (notify/database-refusal.ts) is the live condition `database_blocked`.
 */
import type { Deps } from "../deps.ts";
import { readHealth } from "../../agent/watchdog/watchdog.ts";
import { agentLlmHealth } from "../../agent/llm/llm-health.ts";
import { withAgent } from "../with-agent.ts";
import { databaseRefusal } from "../../notify/database-refusal.ts";

export async function readAgentHealth(deps: Deps, agentId: string) {
  const [watchdog, scope] = await Promise.all([readHealth(deps, agentId), withAgent(deps, agentId)]);
  const llm = scope ? await agentLlmHealth(scope.deps, agentId) : null;
  return { watchdog, llm };
}

/** The health as GET /api/agents/:agent/health writes it: `{ok, conditions, llm}`, times in ISO 8601. */
export async function loadAgentHealth(deps: Deps, agentId: string) {
  const { watchdog, llm } = await readAgentHealth(deps, agentId);
  // The database refusing writes cannot be a stored condition: it is listed live from the process's memory.
  const refusal = databaseRefusal(deps);
  const conditions = refusal
    ? [...watchdog.conditions, { kind: "database_blocked", since: new Date(refusal.since).toISOString(), detail: refusal.reason }]
    : watchdog.conditions;
  return {
    ...watchdog,
    ok: watchdog.ok && !refusal,
    conditions,
    llm: llm && { ...llm, breakerOpenUntil: llm.breakerOpenUntil === null ? null : new Date(llm.breakerOpenUntil).toISOString() },
  };
}
