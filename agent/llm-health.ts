/**
 * How /healthz describes the LLM: "none" when none is configured, `misconfigured: …` while the
 * server refuses our requests in a way retries cannot fix (kept on the LLM breaker row until a
 * call succeeds), otherwise the model name.
 */
import type { AgentDeps } from "./deps.ts";
import { Breaker } from "./breaker.ts";
import { LLM_BREAKER } from "./run-agent.ts";

export async function describeLlm(deps: Pick<AgentDeps, "db" | "clock" | "llm">, dbReachable: boolean): Promise<string> {
  if (!deps.llm) return "none";
  if (!dbReachable) return deps.llm.model;
  const { misconfigured } = await new Breaker(deps, LLM_BREAKER).state();
  return misconfigured ? `misconfigured: ${misconfigured}` : deps.llm.model;
}
