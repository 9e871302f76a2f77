/**
 * The loop watchdog (a cron check, per agent): observes the conditions in conditions.ts and keeps
 * one row per occurrence in watchdog_conditions — opened when a condition starts, its detail
 * refreshed while it holds, closed when it clears. A human is told once when it starts and once
 * when it clears (poison excepted: its items are told one by one, see TOLD_PER_ITEM): the row records each notification, so a tick that dies in between tells again
 * at most once, and that repeat is folded by the notification dedup window (the keys name the
 * condition, so a condition flapping every tick pages at most twice per NOTIFY_DEDUP_WINDOW_S).
 * The health route and the dashboard read the open rows.
 */
import { and, asc, eq, isNull, or } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import { watchdogConditions } from "../../schema/index.ts";
import { notificationStatements } from "../../notify/notify-human.ts";
import { combineWrites, defineTickCheck } from "../../pipeline/index.ts";
import { conditionReads, conditionsFrom, type ConditionKind } from "./conditions.ts";

export const CONDITION_TITLES: Record<ConditionKind, string> = {
  events_waiting: "events are waiting too long for a run",
  failed_runs: "runs keep failing",
  poison: "events were dropped as poison",
  context_budget: "compaction or the context budget is failing",
  llm_breaker_open: "the LLM circuit breaker is open",
  notification_storm: "an instance or the agent is causing a storm of notifications or approvals",
  wake_budget_exhausted: "the agent's wake budget is exhausted",
  scheduler_failing: "the scheduler (QStash on Workers) refuses publishes",
  fleet_breaker_open: "the fleet breaker is open: too many instances dead at once, automatic remediation held",
};

/**
 * Conditions a human already hears about item by item: each poison event or wake is told once by
 * notify/poison-alerts.ts, so the watchdog lists the condition (health route, attention strip)
 * without telling it a second time.
 */
const TOLD_PER_ITEM: ReadonlySet<string> = new Set<ConditionKind>(["poison"]);

export interface HealthCondition {
  kind: string;
  since: string;
  detail: string;
}

type ConditionRow = typeof watchdogConditions.$inferSelect;

export interface WatchdogPlan {
  started: ConditionKind[];
  cleared: string[];
  /** Row changes: a detail refreshed, a condition cleared, notifications marked sent. */
  updates: { id: number; set: Partial<ConditionRow> }[];
  /** New rows, already marked as announced (their notification is in the same batch). */
  inserts: { kind: ConditionKind; detail: string }[];
  /** Notifications to send, in order. */
  notices: { kind: string; phase: "started" | "cleared"; since: number; detail: string; clearedAt: number | null }[];
}

/**
 * The watchdog's decision (pure): given the conditions that hold and the agent's rows that are
 * open or not yet fully announced, which rows open, change or close and which notifications go
 * out. A row is marked announced in the same batch as its notification, so each start and each
 * clear is told once; a row left unannounced by an older crash is told now.
 */
export function planWatchdog(held: Map<ConditionKind, string>, rows: readonly ConditionRow[], now: number): WatchdogPlan {
  const plan: WatchdogPlan = { started: [], cleared: [], updates: [], inserts: [], notices: [] };
  const clears: WatchdogPlan["notices"] = [];
  for (const row of [...rows].sort((a, b) => a.id - b.id)) {
    const set: Partial<ConditionRow> = {};
    let detail = row.detail;
    let clearedAt = row.clearedAt;
    if (clearedAt === null) {
      const holds = held.get(row.kind as ConditionKind);
      if (holds === undefined) {
        clearedAt = set.clearedAt = now;
        plan.cleared.push(row.kind);
      } else if (holds !== row.detail) {
        detail = set.detail = holds;
      }
    }
    let startTold = row.startNotifiedAt !== null;
    if (!startTold) {
      plan.notices.push({ kind: row.kind, phase: "started", since: row.since, detail, clearedAt });
      set.startNotifiedAt = now;
      startTold = true;
    }
    if (clearedAt !== null && startTold && row.clearNotifiedAt === null) {
      clears.push({ kind: row.kind, phase: "cleared", since: row.since, detail, clearedAt });
      set.clearNotifiedAt = now;
    }
    if (Object.keys(set).length) plan.updates.push({ id: row.id, set });
  }
  for (const [kind, detail] of held) {
    if (rows.some((row) => row.kind === kind && row.clearedAt === null)) continue;
    plan.inserts.push({ kind, detail });
    plan.started.push(kind);
    plan.notices.push({ kind, phase: "started", since: now, detail, clearedAt: null });
  }
  plan.notices.push(...clears);
  return plan;
}

/** The tick's watchdog check: conditions and rows read in the snapshot, transitions and notifications in the write batch. */
export const checkLoopHealth = defineTickCheck({
  name: "checkLoopHealth",
  reads(deps: AgentDeps, agentId: string, now: number) {
    return {
      ...conditionReads(deps, agentId, now),
      rows: deps.db
        .select()
        .from(watchdogConditions)
        .where(
          and(
            eq(watchdogConditions.agentId, agentId),
            or(
              isNull(watchdogConditions.clearedAt),
              isNull(watchdogConditions.startNotifiedAt),
              isNull(watchdogConditions.clearNotifiedAt),
            ),
          ),
        ),
    };
  },
  decide(deps, agentId, rows, tick) {
    const { now } = tick;
    const plan = planWatchdog(conditionsFrom(deps, rows, now), rows.rows, now);
    const { db } = deps;
    const notices = combineWrites(
      plan.notices
        .filter((notice) => !TOLD_PER_ITEM.has(notice.kind))
        .map((notice) => {
          const title = CONDITION_TITLES[notice.kind as ConditionKind] ?? notice.kind;
          return notificationStatements(
            deps,
            notice.phase === "started"
              ? {
                  agentId,
                  runId: null,
                  title: `Watchdog: ${title}`,
                  body: `Since ${new Date(notice.since).toISOString()}: ${notice.detail}. See GET /api/agents/${agentId}/health.`,
                  severity: "critical",
                  dedupKey: `watchdog:${notice.kind}:started`,
                }
              : {
                  agentId,
                  runId: null,
                  title: `Watchdog cleared: ${title}`,
                  body: `The condition that started at ${new Date(notice.since).toISOString()} cleared at ${new Date(notice.clearedAt!).toISOString()}.`,
                  severity: "info",
                  dedupKey: `watchdog:${notice.kind}:cleared`,
                },
          );
        }),
    );
    const statements = [
      ...plan.updates.map(({ id, set }) => db.update(watchdogConditions).set(set).where(eq(watchdogConditions.id, id))),
      ...plan.inserts.map(({ kind, detail }) =>
        db.insert(watchdogConditions).values({ agentId, kind, since: now, detail, startNotifiedAt: now }),
      ),
      ...notices.statements,
    ];
    const own = statements.length - notices.statements.length;
    return {
      statements,
      async after(results): Promise<{ started: string[]; cleared: string[] }> {
        await notices.after(results.slice(own));
        const { started, cleared } = plan;
        if (started.length || cleared.length) deps.log.info("watchdog", { agentId, started, cleared });
        return { started, cleared };
      },
    };
  },
});

/** The open conditions, oldest first, as GET /api/agents/:agent/health and the dashboard show them. */
export async function readHealth(deps: Pick<AgentDeps, "db">, agentId: string): Promise<{ ok: boolean; conditions: HealthCondition[] }> {
  const rows = await deps.db
    .select()
    .from(watchdogConditions)
    .where(and(eq(watchdogConditions.agentId, agentId), isNull(watchdogConditions.clearedAt)))
    .orderBy(asc(watchdogConditions.since), asc(watchdogConditions.id));
  const conditions = rows.map((r) => ({ kind: r.kind, since: new Date(r.since).toISOString(), detail: r.detail }));
  return { ok: conditions.length === 0, conditions };
}
