/**
 * The loop watchdog (a cron check, per agent): observes the conditions in conditions.ts and keeps
 * one row per occurrence in watchdog_conditions — opened when a condition starts, its detail
 * refreshed while it holds, closed when it clears. A human is told once when it starts and once
 * when it clears: the row records each notification, so a tick that dies in between tells again
 * at most once, and that repeat is folded by the notification dedup window (the keys name the
 * condition, so a condition flapping every tick pages at most twice per NOTIFY_DEDUP_WINDOW_S).
 * The health route and the dashboard read the open rows.
 */
import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Deps } from "../../runtime/deps.ts";
import { watchdogConditions } from "../../schema/index.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import type { TickCheck } from "../../triggers/cron-tick.ts";
import { observeConditions, type ConditionKind } from "./conditions.ts";

export const CONDITION_TITLES: Record<ConditionKind, string> = {
  events_waiting: "events are waiting too long for a run",
  failed_runs: "runs keep failing",
  poison: "events were dropped as poison",
  context_budget: "compaction or the context budget is failing",
  llm_breaker_open: "the LLM circuit breaker is open",
  notification_storm: "an instance is causing a storm of notifications or approvals",
  wake_budget_exhausted: "the agent's wake budget is exhausted",
};

export interface HealthCondition {
  kind: string;
  since: string;
  detail: string;
}

export async function watchLoop(deps: Deps, agentId: string): Promise<{ started: string[]; cleared: string[] }> {
  const { db, clock } = deps;
  const now = clock.now();
  const held = await observeConditions(deps, agentId);
  const open = await db
    .select()
    .from(watchdogConditions)
    .where(and(eq(watchdogConditions.agentId, agentId), isNull(watchdogConditions.clearedAt)));
  const started: string[] = [];
  const cleared: string[] = [];
  for (const row of open) {
    const detail = held.get(row.kind as ConditionKind);
    if (detail === undefined) {
      await db.update(watchdogConditions).set({ clearedAt: now }).where(and(eq(watchdogConditions.id, row.id), isNull(watchdogConditions.clearedAt)));
      cleared.push(row.kind);
    } else if (detail !== row.detail) {
      await db.update(watchdogConditions).set({ detail }).where(eq(watchdogConditions.id, row.id));
    }
  }
  for (const [kind, detail] of held) {
    if (open.some((row) => row.kind === kind)) continue;
    await db.insert(watchdogConditions).values({ agentId, kind, since: now, detail });
    started.push(kind);
  }
  await tellHuman(deps, agentId);
  return { started, cleared };
}

/** Sends the start and clear notifications not sent yet, each once. */
async function tellHuman(deps: Deps, agentId: string): Promise<void> {
  const { db, clock } = deps;
  const mine = eq(watchdogConditions.agentId, agentId);
  const unsent = await db
    .select()
    .from(watchdogConditions)
    .where(and(mine, isNull(watchdogConditions.startNotifiedAt)))
    .orderBy(asc(watchdogConditions.id));
  for (const row of unsent) {
    const title = CONDITION_TITLES[row.kind as ConditionKind] ?? row.kind;
    await notifyHuman(deps, {
      agentId,
      runId: null,
      title: `Watchdog: ${title}`,
      body: `Since ${new Date(row.since).toISOString()}: ${row.detail}. See GET /api/agents/${agentId}/health.`,
      severity: "critical",
      dedupKey: `watchdog:${row.kind}:started`,
    });
    await db.update(watchdogConditions).set({ startNotifiedAt: clock.now() }).where(eq(watchdogConditions.id, row.id));
  }
  const clearedRows = await db
    .select()
    .from(watchdogConditions)
    .where(and(mine, isNotNull(watchdogConditions.clearedAt), isNotNull(watchdogConditions.startNotifiedAt), isNull(watchdogConditions.clearNotifiedAt)))
    .orderBy(asc(watchdogConditions.id));
  for (const row of clearedRows) {
    const title = CONDITION_TITLES[row.kind as ConditionKind] ?? row.kind;
    await notifyHuman(deps, {
      agentId,
      runId: null,
      title: `Watchdog cleared: ${title}`,
      body: `The condition that started at ${new Date(row.since).toISOString()} cleared at ${new Date(row.clearedAt!).toISOString()}.`,
      severity: "info",
      dedupKey: `watchdog:${row.kind}:cleared`,
    });
    await db.update(watchdogConditions).set({ clearNotifiedAt: clock.now() }).where(eq(watchdogConditions.id, row.id));
  }
}

/** The open conditions, oldest first, as GET /api/agents/:agent/health and the dashboard show them. */
export async function readHealth(deps: Pick<Deps, "db">, agentId: string): Promise<{ ok: boolean; conditions: HealthCondition[] }> {
  const rows = await deps.db
    .select()
    .from(watchdogConditions)
    .where(and(eq(watchdogConditions.agentId, agentId), isNull(watchdogConditions.clearedAt)))
    .orderBy(asc(watchdogConditions.since), asc(watchdogConditions.id));
  const conditions = rows.map((r) => ({ kind: r.kind, since: new Date(r.since).toISOString(), detail: r.detail }));
  return { ok: conditions.length === 0, conditions };
}

export const checkLoopHealth: TickCheck = async function checkLoopHealth(deps, agentId) {
  const { started, cleared } = await watchLoop(deps, agentId);
  if (started.length || cleared.length) deps.log.info("watchdog", { agentId, started, cleared });
};
