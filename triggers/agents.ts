/**
 * Agent rows: the `default` agent created at start-up, others through the agents API. Creating an
 * agent also opens its first conversation epoch. Archiving keeps every row of its history and
 * only sets `archivedAt`: the tick stops listing it, and runs and ingest refuse it.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import type { AgentSettings } from "../runtime/agent-settings.ts";
import { agents, sessions } from "../schema/index.ts";

export const DEFAULT_AGENT = "default";

export type AgentRow = typeof agents.$inferSelect;

/** Creates the agent and its first session if missing; harmless to repeat. */
export async function ensureAgent(db: Db, agentId: string, now: number): Promise<void> {
  await db.batch([
    db.insert(agents).values({ id: agentId, createdAt: now }).onConflictDoNothing(),
    db.insert(sessions).values({ agentId, epoch: 1, startedAt: now }).onConflictDoNothing(),
  ]);
}

/** Creates a new agent; false when the id is taken (archived agents keep theirs). */
export async function createAgent(db: Db, agent: { id: string; name?: string | undefined; settings: AgentSettings }, now: number): Promise<boolean> {
  const [inserted] = await db.batch([
    db.insert(agents).values({ id: agent.id, name: agent.name ?? null, settings: agent.settings, createdAt: now }).onConflictDoNothing().returning({ id: agents.id }),
    db.insert(sessions).values({ agentId: agent.id, epoch: 1, startedAt: now }).onConflictDoNothing(),
  ]);
  return inserted.length === 1;
}

export async function updateAgent(db: Db, agentId: string, change: { name?: string | undefined; settings?: AgentSettings | undefined }): Promise<void> {
  const set: Partial<AgentRow> = {};
  if (change.name !== undefined) set.name = change.name;
  if (change.settings !== undefined) set.settings = change.settings;
  if (Object.keys(set).length > 0) await db.update(agents).set(set).where(eq(agents.id, agentId));
}

/** Archives the agent (idempotent: the first archive time is kept). */
export async function archiveAgent(db: Db, agentId: string, now: number): Promise<void> {
  await db.update(agents).set({ archivedAt: now }).where(and(eq(agents.id, agentId), isNull(agents.archivedAt)));
}

export async function findAgent(db: Db, agentId: string): Promise<AgentRow | null> {
  const [row] = await db.select().from(agents).where(eq(agents.id, agentId)).limit(1);
  return row ?? null;
}

export async function listAgents(db: Db): Promise<AgentRow[]> {
  return db.select().from(agents).orderBy(agents.id);
}

/** Agents the tick visits: every one not archived. */
export async function listActiveAgentIds(db: Db): Promise<string[]> {
  const rows = await db.select({ id: agents.id }).from(agents).where(isNull(agents.archivedAt));
  return rows.map((r) => r.id);
}

export async function listAgentIds(db: Db): Promise<string[]> {
  const rows = await db.select({ id: agents.id }).from(agents);
  return rows.map((r) => r.id);
}
