/**
 * Session reset: a new conversation epoch, and nothing else. The run counter, wakes, lease,
 * scheduled run, instances and pinned memory are untouched, so the agent keeps working; a run in
 * progress finishes writing to the epoch it started in.
 */
import { eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { insertWhere } from "../db/insert-where.ts";
import { agents, sessions } from "../schema/index.ts";

export async function resetSession(deps: PipelineDeps, agentId: string): Promise<{ sessionEpoch: number; runCounter: number }> {
  const now = deps.clock.now();
  const [bumped] = await deps.db.batch([
    deps.db
      .update(agents)
      .set({ sessionEpoch: sql`${agents.sessionEpoch} + 1` })
      .where(eq(agents.id, agentId))
      .returning({ sessionEpoch: agents.sessionEpoch, runCounter: agents.runCounter }),
    insertWhere(deps.db, sessions, { agentId: sql`${agents.id}`, epoch: sql`${agents.sessionEpoch}`, startedAt: now }, eq(agents.id, agentId), sql`${agents}`).onConflictDoNothing(),
  ]);
  const row = bumped[0];
  if (!row) throw new Error(`unknown agent ${agentId}`);
  return row;
}
