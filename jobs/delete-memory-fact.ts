/**
 * An operator deletes one of the agent's pinned facts, from the API or the dashboard: the delete
 * (no run fence: a human's write), then the activity row naming the operator and the key.
 */
import type { Deps } from "./deps.ts";
import { forget } from "../agent/memory.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";

/** False when there was no fact under `key` (nothing is written then). */
export async function deleteMemoryFact(deps: Pick<Deps, "db" | "clock">, who: Principal, agentId: string, key: string): Promise<boolean> {
  if (!(await forget(deps, agentId, key))) return false;
  await recordActivity(deps.db, who, { action: "memory_delete", agentId, subject: key, at: deps.clock.now() });
  return true;
}
