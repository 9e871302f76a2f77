/**
 * Session reset: a new conversation epoch, and nothing else. The run counter, wakes, lease,
 * scheduled run, instances and pinned memory are untouched, so the agent keeps working; a run in
 * progress finishes writing to the epoch it started in. Only when the operator asks
 * (`clearMemory`) are the agent's pinned facts deleted too, in the same batch as the new epoch.
 * The new session names who reset (`startedBy`).
 */
import { and, eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { insertWhere } from "../db/insert-where.ts";
import { agents, memory, sessions } from "../schema/index.ts";

export async function resetSession(
  deps: PipelineDeps,
  agentId: string,
  options: { clearMemory?: boolean; startedBy?: string } = {},
): Promise<{ sessionEpoch: number; runCounter: number; memoryCleared: number }> {
  const now = deps.clock.now();
  // Deleting nothing (`1 = 0`) keeps the batch's shape the same either way.
  const clearing = options.clearMemory ? sql`1 = 1` : sql`1 = 0`;
  const [bumped, , cleared] = await deps.db.batch([
    deps.db
      .update(agents)
      .set({ sessionEpoch: sql`${agents.sessionEpoch} + 1` })
      .where(eq(agents.id, agentId))
      .returning({ sessionEpoch: agents.sessionEpoch, runCounter: agents.runCounter }),
    insertWhere(
      deps.db,
      sessions,
      { agentId: sql`${agents.id}`, epoch: sql`${agents.sessionEpoch}`, startedAt: now, startedBy: options.startedBy ?? null },
      eq(agents.id, agentId),
      sql`${agents}`,
    ).onConflictDoNothing(),
    deps.db.delete(memory).where(and(eq(memory.agentId, agentId), clearing)),
  ]);
  const row = bumped[0];
  if (!row) throw new Error(`unknown agent ${agentId}`);
  return { ...row, memoryCleared: cleared.rowsAffected };
}
