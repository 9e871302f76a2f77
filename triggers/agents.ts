/**
 * Agent rows: created once (the `default` agent at start-up), looked up by the API. Creating an
 * agent also opens its first conversation epoch.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { agents, sessions } from "../schema/index.ts";

export const DEFAULT_AGENT = "default";

/** Creates the agent and its first session if missing; harmless to repeat. */
export async function ensureAgent(db: Db, agentId: string, now: number): Promise<void> {
  await db.batch([
    db.insert(agents).values({ id: agentId, createdAt: now }).onConflictDoNothing(),
    db.insert(sessions).values({ agentId, epoch: 1, startedAt: now }).onConflictDoNothing(),
  ]);
}

export async function findAgent(db: Db, agentId: string) {
  const [row] = await db.select().from(agents).where(eq(agents.id, agentId)).limit(1);
  return row ?? null;
}

export async function listAgentIds(db: Db): Promise<string[]> {
  const rows = await db.select({ id: agents.id }).from(agents);
  return rows.map((r) => r.id);
}
