/**
 * What one cron invocation should do, from one read: which active agents have something due, and
 * whether the scheduler is refusing publishes. An agent is due when its tick would act: pending
 * events or due wakes with no run scheduled or running, a dead lease, a scheduled run overdue by
 * OVERDUE_MS (its delivery is lost), or reconciliation's interval passed. The invocation ticks up
 * to `inlineAgents` agents itself (due ones first, rotating each minute so every due agent gets its
 * turn when there are more) and fans out only the due agents left over, so an agent with nothing
 * due publishes nothing. While the scheduler refuses, `dueRunSlots` names the runs the invocation
 * performs itself.
 */
import { and, asc, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { batchByName } from "../db/named-batch.ts";
import { agents, events, wakes } from "../schema/index.ts";
import { OVERDUE_MS } from "./cron-tick.ts";
import { healthFrom, schedulerHealthRead, type SchedulerHealth } from "./scheduler-health.ts";

export type DueReason = "pending work" | "dead lease" | "overdue run" | "reconcile";

export interface AgentDue {
  agentId: string;
  reasons: DueReason[];
}

export interface CronState {
  agents: AgentDue[];
  health: SchedulerHealth;
}

interface AgentRow {
  id: string;
  nextRunAt: number | null;
  leaseToken: string | null;
  leaseExpiresAt: number | null;
  lastReconciledAt: number | null;
  pendingWork: number;
}

/** Why the agent's tick has something to do now (pure); empty when nothing is due. */
export function dueReasons(row: AgentRow, now: number, reconcileIntervalMs: number): DueReason[] {
  const reasons: DueReason[] = [];
  const running = row.leaseToken !== null;
  if (Number(row.pendingWork) > 0 && !running && row.nextRunAt === null) reasons.push("pending work");
  if (running && row.leaseExpiresAt !== null && row.leaseExpiresAt <= now) reasons.push("dead lease");
  if (!running && row.nextRunAt !== null && row.nextRunAt <= now - OVERDUE_MS) reasons.push("overdue run");
  if (row.lastReconciledAt === null || row.lastReconciledAt <= now - reconcileIntervalMs) reasons.push("reconcile");
  return reasons;
}

/** The active agents with what is due for each, and the scheduler's health, in one round trip. */
export async function readCronState(deps: Pick<PipelineDeps, "db" | "config" | "scheduler">, now: number): Promise<CronState> {
  const { db } = deps;
  // The agent's id qualified with its table: drizzle writes a one-table select's columns
  // unqualified, and a bare "id" inside the subqueries is the event's (or wake's) own id — matching
  // nothing, after reading every pending event and wake (bench/turso-rows.bench.ts counted them).
  const agentId = sql`${agents}.${sql.identifier(agents.id.name)}`;
  const pending = sql<number>`(exists (select 1 from ${events} where ${events.agentId} = ${agentId} and ${events.status} = 'pending')
    or exists (select 1 from ${wakes} where ${wakes.agentId} = ${agentId} and ${wakes.status} = 'pending' and ${wakes.dueAt} <= ${now}))`;
  const rows = await batchByName(db, {
    agents: db
      .select({
        id: agents.id,
        nextRunAt: agents.nextRunAt,
        leaseToken: agents.leaseToken,
        leaseExpiresAt: agents.leaseExpiresAt,
        lastReconciledAt: agents.lastReconciledAt,
        pendingWork: pending,
      })
      .from(agents)
      .where(isNull(agents.archivedAt))
      .orderBy(asc(agents.id)),
    health: schedulerHealthRead(deps, deps.scheduler.kind),
  });
  return {
    agents: rows.agents.map((row) => ({ agentId: row.id, reasons: dueReasons(row, now, deps.config.reconcileIntervalMs) })),
    health: healthFrom(deps.scheduler.kind, rows.health[0]),
  };
}

/** `list` rotated to start at `offset` (mod its length). */
function rotated<T>(list: readonly T[], offset: number): T[] {
  if (list.length === 0) return [];
  const start = offset % list.length;
  return [...list.slice(start), ...list.slice(0, start)];
}

/**
 * Which agents this invocation ticks itself and which it fans out (pure). Due agents come first,
 * rotated by `turn` (the minute), so with more due agents than `inlineAgents` each gets an inline
 * tick in turn; the remaining inline places go to agents with nothing due (a tick costs no
 * message there). Only due agents are ever fanned out.
 */
export function chooseInline(agentsDue: readonly AgentDue[], inlineAgents: number, turn: number): { inline: string[]; fanOut: string[] } {
  const due = agentsDue.filter((a) => a.reasons.length > 0).map((a) => a.agentId);
  const idle = agentsDue.filter((a) => a.reasons.length === 0).map((a) => a.agentId);
  const inline = [...rotated(due, turn * inlineAgents), ...rotated(idle, turn * inlineAgents)].slice(0, inlineAgents);
  return { inline, fanOut: due.filter((id) => !inline.includes(id)) };
}

/**
 * Runs that are due and whose lease is free (or dead), oldest first, at most `limit`: what a cron
 * invocation performs itself while the scheduler refuses, so an accepted event's run still happens.
 */
export async function dueRunSlots(
  deps: Pick<PipelineDeps, "db">,
  now: number,
  limit: number,
): Promise<{ agentId: string; slot: number }[]> {
  if (limit <= 0) return [];
  return deps.db
    .select({ agentId: agents.id, slot: agents.runSlot })
    .from(agents)
    .where(
      and(
        isNull(agents.archivedAt),
        isNotNull(agents.nextRunAt),
        lte(agents.nextRunAt, now),
        or(isNull(agents.leaseToken), lte(agents.leaseExpiresAt, now)),
      ),
    )
    .orderBy(asc(agents.nextRunAt))
    .limit(limit);
}
