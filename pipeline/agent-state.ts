/**
 * Read models of the pipeline for the API and dashboard: the agent's state and its run records.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { agents, events, runs, wakes } from "../schema/index.ts";
import { iso } from "../runtime/time.ts";

export async function getAgentState(deps: PipelineDeps, agentId: string) {
  const { db, clock, config } = deps;
  const now = clock.now();
  const [agentRows, pendingEvents, pendingWakes] = await db.batch([
    db.select().from(agents).where(eq(agents.id, agentId)),
    db
      .select({ count: sql<number>`count(*)` })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.status, "pending"))),
    db
      .select({ count: sql<number>`count(*)` })
      .from(wakes)
      .where(and(eq(wakes.agentId, agentId), eq(wakes.status, "pending"))),
  ]);
  const agent = agentRows[0];
  if (!agent) return null;
  return {
    agentId,
    runCounter: agent.runCounter,
    sessionEpoch: agent.sessionEpoch,
    running: agent.leaseRunId !== null && (agent.leaseExpiresAt ?? 0) > now,
    runningRunId: agent.leaseRunId,
    nextRunAt: iso(agent.nextRunAt),
    pendingEvents: Number(pendingEvents[0]?.count ?? 0),
    pendingWakes: Number(pendingWakes[0]?.count ?? 0),
    contextTokens: agent.contextTokens,
    contextBudget: config.contextBudgetTokens,
  };
}

export function presentRun(run: typeof runs.$inferSelect) {
  return {
    runId: run.runId,
    status: run.status,
    noop: run.noop,
    decider: run.decider,
    sessionEpoch: run.sessionEpoch,
    triggers: run.triggers as { source: string; id: number }[],
    wakesConsumed: run.wakesConsumed as number[],
    promptTokens: run.promptTokens,
    completionTokens: run.completionTokens,
    contextTokens: run.contextTokens,
    compaction: run.compaction,
    reply: run.reply,
    truncated: run.truncated,
    error: run.error,
    startedAt: iso(run.startedAt),
    finishedAt: iso(run.finishedAt),
  };
}

export async function listRuns(deps: PipelineDeps, agentId: string, limit: number) {
  const rows = await deps.db.select().from(runs).where(eq(runs.agentId, agentId)).orderBy(desc(runs.runId)).limit(limit);
  return rows.map(presentRun);
}

export async function getRun(deps: PipelineDeps, agentId: string, runId: number) {
  const [row] = await deps.db
    .select()
    .from(runs)
    .where(and(eq(runs.agentId, agentId), eq(runs.runId, runId)));
  return row ? presentRun(row) : null;
}

/** The inbox, newest first: each event's status, why it was dropped (e.g. `poison`) and its attempts. */
export async function listEvents(deps: Pick<PipelineDeps, "db">, agentId: string, status?: string, limit = 100) {
  const rows = await deps.db
    .select()
    .from(events)
    .where(and(eq(events.agentId, agentId), status ? eq(events.status, status) : undefined))
    .orderBy(desc(events.id))
    .limit(limit);
  return rows.map((e) => ({
    id: e.id,
    source: e.source,
    priority: e.priority,
    status: e.status,
    dropReason: e.dropReason,
    attempts: e.attempts,
    runId: e.runId,
    payload: e.payload,
    createdAt: iso(e.createdAt),
    consumedAt: iso(e.consumedAt),
  }));
}
