/**
 * The deployment's view of its agents' LLMs for /healthz: the agents whose breaker for the model
 * they use now is open or names a misconfiguration. A breaker of a model an agent no longer uses
 * is not listed (changing the model is the fix). Bounded by the breaker rows in trouble.
 */
import type { Deps } from "./deps.ts";
import { agentLlmHealth, troubledLlmBreakers } from "../agent/llm/llm-health.ts";
import { withAgent } from "./with-agent.ts";

export interface LlmTrouble {
  agent: string;
  model: string;
  breakerOpenUntil: string | null;
  misconfigured: string | null;
}

export async function llmTrouble(deps: Deps): Promise<LlmTrouble[]> {
  if (!deps.llm) return [];
  const troubled = await troubledLlmBreakers(deps);
  const found = await Promise.all(
    troubled.map(async ({ agentId, model }) => {
      const scope = await withAgent(deps, agentId);
      const health = scope ? await agentLlmHealth(scope.deps, agentId) : null;
      if (!health || health.model !== model || (health.breakerOpenUntil === null && health.misconfigured === null)) return [];
      const breakerOpenUntil = health.breakerOpenUntil === null ? null : new Date(health.breakerOpenUntil).toISOString();
      return [{ agent: agentId, model, breakerOpenUntil, misconfigured: health.misconfigured }];
    }),
  );
  return found.flat().sort((a, b) => a.agent.localeCompare(b.agent));
}
