/**
 * Archiving and restoring an agent, for the API and the dashboard alike: the last active agent is
 * not archived (that would stop all supervision while /healthz stays ok: 409 naming why), and an
 * archived agent can be restored. Each change that happened is audited once in the activity log;
 * a repeat (already archived, not archived) changes and records nothing.
 */
import type { Deps } from "./deps.ts";
import { RequestError } from "./errors.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { archiveAgent, restoreAgent } from "../pipeline/index.ts";

export const LAST_ACTIVE_AGENT =
  "it is the last active agent: archiving it would stop all supervision (create or restore another agent first)";

export async function archiveAsOperator(deps: Pick<Deps, "db" | "clock">, who: Principal, agentId: string): Promise<void> {
  const outcome = await archiveAgent(deps.db, agentId, deps.clock.now());
  if (outcome === "last_active") throw new RequestError(409, `agent ${agentId} was not archived: ${LAST_ACTIVE_AGENT}`);
  if (outcome === "archived")
    await recordActivity(deps.db, who, { action: "agent_archive", agentId, subject: agentId, at: deps.clock.now() });
}

export async function restoreAsOperator(deps: Pick<Deps, "db" | "clock">, who: Principal, agentId: string): Promise<void> {
  if (await restoreAgent(deps.db, agentId))
    await recordActivity(deps.db, who, { action: "agent_restore", agentId, subject: agentId, at: deps.clock.now() });
}
