/**
 * An operator's session reset, from the API or the dashboard: the new epoch (and, when asked, the
 * agent's pinned memory cleared in the same batch: pipeline/reset-session.ts), naming who reset on
 * the new session (`startedBy`), then the activity
 * row naming the operator and what was cleared.
 */
import type { PipelineDeps } from "../pipeline/index.ts";
import { resetSession } from "../pipeline/index.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";

export async function resetAgentSession(deps: PipelineDeps, who: Principal, agentId: string, clearMemory: boolean) {
  const reset = await resetSession(deps, agentId, { clearMemory, startedBy: who.name });
  const subject = `epoch ${reset.sessionEpoch}${clearMemory ? `, memory cleared (${reset.memoryCleared} facts)` : ""}`;
  await recordActivity(deps.db, who, { action: "reset", agentId, subject, at: deps.clock.now() });
  return reset;
}
