/**
 * Agent rows: created once (the `default` agent at start-up), looked up by the API. Creating an
 * agent also opens its first conversation epoch. Agents are never deleted, so once an agent is
 * known to exist the process remembers it and request paths skip the lookup.
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

/** Agents known to exist, per database handle (a process or isolate), never forgotten. */
const knownAgents = new WeakMap<Db, Set<string>>();

/** True when the agent exists; a database round trip only the first time per process. */
export async function agentExists(db: Db, agentId: string): Promise<boolean> {
  const known = knownAgents.get(db) ?? new Set<string>();
  if (known.has(agentId)) return true;
  if (!(await findAgent(db, agentId))) return false;
  known.add(agentId);
  knownAgents.set(db, known);
  return true;
}

export async function listAgentIds(db: Db): Promise<string[]> {
  const rows = await db.select({ id: agents.id }).from(agents);
  return rows.map((r) => r.id);
}
