/**
 * Agent rows: the `default` agent created at start-up, others through the agents API. Creating an
 * agent also opens its first conversation epoch. Archiving keeps every row of its history and
 * only sets `archivedAt`: the tick stops listing it, and runs and ingest refuse it.
 * Request paths read an agent row through a short per-process cache (AGENT_ROW_TTL_MS), so an
 * ingest costs no extra round trip; a settings change or an archive made elsewhere takes effect
 * within that time (at once in the process that made it).
 */
import { and, eq, exists, isNotNull, isNull, ne, sql } from "drizzle-orm";
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
export async function createAgent(
  db: Db,
  agent: { id: string; name?: string | undefined; settings: AgentSettings; webhookSecret?: string | undefined },
  now: number,
): Promise<boolean> {
  const row = {
    id: agent.id,
    name: agent.name ?? null,
    settings: agent.settings,
    webhookSecret: agent.webhookSecret ?? null,
    createdAt: now,
  };
  const [inserted] = await db.batch([
    db.insert(agents).values(row).onConflictDoNothing().returning({ id: agents.id }),
    db.insert(sessions).values({ agentId: agent.id, epoch: 1, startedAt: now }).onConflictDoNothing(),
  ]);
  return inserted.length === 1;
}

export async function updateAgent(
  db: Db,
  agentId: string,
  change: { name?: string | undefined; settings?: AgentSettings | undefined },
): Promise<void> {
  const set: Partial<AgentRow> = {};
  if (change.name !== undefined) set.name = change.name;
  if (change.settings !== undefined) set.settings = change.settings;
  if (Object.keys(set).length > 0) await db.update(agents).set(set).where(eq(agents.id, agentId));
  forgetAgent(db, agentId);
}

/**
 * Gives the agent a new webhook secret; the one it had (null: WEBHOOK_SECRET) still verifies
 * until `previousUntil`. False when there is no such agent.
 */
export async function rotateWebhookSecret(db: Db, agentId: string, secret: string, previousUntil: number): Promise<boolean> {
  const done = await db
    .update(agents)
    .set({ webhookSecret: secret, webhookSecretPrevious: sql`${agents.webhookSecret}`, webhookSecretPreviousUntil: previousUntil })
    .where(eq(agents.id, agentId))
    .returning({ id: agents.id });
  forgetAgent(db, agentId);
  return done.length === 1;
}

/**
 * Archives the agent (idempotent: the first archive time is kept), unless it is the last active
 * one: archiving that would stop all supervision, so it is refused ("last_active") in the same
 * statement that archives, with no read between for a concurrent archive to slip through.
 */
export async function archiveAgent(db: Db, agentId: string, now: number): Promise<"archived" | "already" | "last_active"> {
  const others = db
    .select({ id: agents.id })
    .from(agents)
    .where(and(ne(agents.id, agentId), isNull(agents.archivedAt)));
  const done = await db
    .update(agents)
    .set({ archivedAt: now })
    .where(and(eq(agents.id, agentId), isNull(agents.archivedAt), exists(others)))
    .returning({ id: agents.id });
  forgetAgent(db, agentId);
  if (done.length === 1) return "archived";
  const row = await findAgent(db, agentId);
  return row?.archivedAt != null ? "already" : "last_active";
}

/** Un-archives the agent: ticks, runs and ingest resume. False when it was not archived. */
export async function restoreAgent(db: Db, agentId: string): Promise<boolean> {
  const done = await db
    .update(agents)
    .set({ archivedAt: null })
    .where(and(eq(agents.id, agentId), isNotNull(agents.archivedAt)))
    .returning({ id: agents.id });
  forgetAgent(db, agentId);
  return done.length === 1;
}

export async function findAgent(db: Db, agentId: string): Promise<AgentRow | null> {
  const [row] = await db.select().from(agents).where(eq(agents.id, agentId)).limit(1);
  return row ?? null;
}

/** Agent rows recently read, per database handle (a process or isolate). */
const recentAgents = new WeakMap<Db, Map<string, { row: AgentRow; readAt: number }>>();
export const AGENT_ROW_TTL_MS = 5_000;

/** The agent's row, from this process's cache when read within AGENT_ROW_TTL_MS. */
export async function findAgentRecent(db: Db, agentId: string, now: number): Promise<AgentRow | null> {
  const cache = recentAgents.get(db) ?? new Map<string, { row: AgentRow; readAt: number }>();
  recentAgents.set(db, cache);
  const hit = cache.get(agentId);
  if (hit && now - hit.readAt < AGENT_ROW_TTL_MS && now >= hit.readAt) return hit.row;
  const row = await findAgent(db, agentId);
  if (row) cache.set(agentId, { row, readAt: now });
  else cache.delete(agentId);
  return row;
}

function forgetAgent(db: Db, agentId: string): void {
  recentAgents.get(db)?.delete(agentId);
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
