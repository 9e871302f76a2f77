/**
 * What the loop watchdog looks for, per agent. Each condition names the statements it reads (they
 * join the tick's one snapshot batch) and a pure function of their rows that answers a detail line
 * when the condition holds now, or null. Read-only; watchdog.ts stores the transitions and tells
 * a human.
 */
import { and, desc, eq, gt, inArray, isNotNull, like, lt, or, sql } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import { approvals, breakers, events, notifications, runs, wakes } from "../../schema/index.ts";
import { debounceWindow } from "../../pipeline/index.ts";
import { selfWakesInHour, wakeBudgetFrom } from "../../pipeline/index.ts";
import { OVERDUE_MS } from "../../pipeline/index.ts";
import { schedulerHealthRead } from "../../pipeline/index.ts";
import type { NamedResults } from "../../db/named-batch.ts";
import { llmBreakerName } from "../llm/breaker.ts";
import {
  breakerEpisodeReads,
  breakerTrips,
  describeShare,
  fleetHealthReads,
  fleetShare,
  LIFTED_NOTE,
  liftedFrom,
} from "../../fleet/actions/fleet-breaker.ts";

export const CONDITION_KINDS = [
  "events_waiting",
  "failed_runs",
  "poison",
  "context_budget",
  "llm_breaker_open",
  "notification_storm",
  "wake_budget_exhausted",
  "scheduler_failing",
  "fleet_breaker_open",
] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

const HOUR_MS = 3_600_000;
/** How long a poison event keeps its condition up (until a human has had a day to look). */
export const POISON_WINDOW_MS = 24 * HOUR_MS;
/** The cron tick's period: an event may wait this much on top of its window before a run. */
const TICK_MS = OVERDUE_MS;

const iso = (ms: number) => new Date(ms).toISOString();

/** All conditions' statements, named `<kind>.<part>`, for one batch. */
export function conditionReads(deps: Pick<AgentDeps, "db" | "config" | "scheduler" | "llm">, agentId: string, now: number) {
  const { db, config } = deps;
  const late = (priority: 0 | 1) =>
    and(eq(events.priority, priority), lt(events.createdAt, now - 2 * debounceWindow(config, priority) - TICK_MS));
  const poisonSince = now - POISON_WINDOW_MS;
  const fleet = fleetHealthReads(deps, agentId, now);
  const episode = breakerEpisodeReads(deps, agentId);
  return {
    "events_waiting.late": db
      .select({ n: sql<number>`count(*)`, oldest: sql<number | null>`min(${events.createdAt})` })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.status, "pending"), or(late(0), late(1)))),
    "failed_runs.last": db
      .select({ runId: runs.runId, status: runs.status, error: runs.error })
      .from(runs)
      .where(and(eq(runs.agentId, agentId), inArray(runs.status, ["succeeded", "failed", "crashed"])))
      .orderBy(desc(runs.runId))
      .limit(config.watchdogFailedRuns),
    "poison.events": db
      .select({ n: sql<number>`count(*)` })
      .from(events)
      .where(
        and(
          eq(events.agentId, agentId),
          eq(events.status, "dropped"),
          eq(events.dropReason, "poison"),
          gt(sql`coalesce(${events.consumedAt}, ${events.createdAt})`, poisonSince),
        ),
      ),
    "poison.wakes": db
      .select({ n: sql<number>`count(*)` })
      .from(wakes)
      .where(
        and(eq(wakes.agentId, agentId), eq(wakes.status, "dropped"), gt(sql`coalesce(${wakes.consumedAt}, ${wakes.dueAt})`, poisonSince)),
      ),
    "context_budget.failing": db
      .select({ runId: runs.runId })
      .from(runs)
      .where(
        and(
          eq(runs.agentId, agentId),
          gt(runs.startedAt, now - HOUR_MS),
          or(like(runs.error, "%compaction could not summarise%"), like(runs.error, "%cannot fit the budget%")),
        ),
      )
      .orderBy(desc(runs.runId)),
    // Only this agent's breaker for the model it uses now: another agent's failures are not its own.
    "llm_breaker_open.breaker": db
      .select()
      .from(breakers)
      .where(
        and(eq(breakers.name, llmBreakerName(agentId, deps.llm?.model ?? "")), isNotNull(breakers.openUntil), gt(breakers.openUntil, now)),
      ),
    "notification_storm.sent": db
      .select({ instanceId: notifications.instanceId, n: sql<number>`count(*)` })
      .from(notifications)
      .where(and(eq(notifications.agentId, agentId), isNotNull(notifications.instanceId), gt(notifications.createdAt, now - HOUR_MS)))
      .groupBy(notifications.instanceId),
    "notification_storm.asked": db
      .select({ instanceId: approvals.instanceId, n: sql<number>`count(*)` })
      .from(approvals)
      .where(and(eq(approvals.agentId, agentId), isNotNull(approvals.instanceId), gt(approvals.createdAt, now - HOUR_MS)))
      .groupBy(approvals.instanceId),
    // Per agent as well: a storm spread over 200 instances, a few each, is a storm.
    "notification_storm.agentSent": db
      .select({ n: sql<number>`count(*)` })
      .from(notifications)
      .where(and(eq(notifications.agentId, agentId), gt(notifications.createdAt, now - HOUR_MS))),
    "notification_storm.agentAsked": db
      .select({ n: sql<number>`count(*)` })
      .from(approvals)
      .where(and(eq(approvals.agentId, agentId), gt(approvals.createdAt, now - HOUR_MS))),
    "wake_budget_exhausted.recent": selfWakesInHour(deps, agentId, now),
    // The deployment's scheduler, not the agent's: every agent's watchdog sees it (its channels differ).
    "scheduler_failing.health": schedulerHealthRead(deps, deps.scheduler.kind),
    // The breaker (fleet/actions/fleet-breaker.ts): the action table reads the same rule live.
    "fleet_breaker_open.instances": fleet.instances,
    "fleet_breaker_open.listed": fleet.listed,
    "fleet_breaker_open.episode": episode.episode,
    "fleet_breaker_open.lifts": episode.lifts,
  };
}

export type ConditionRows = NamedResults<ReturnType<typeof conditionReads>>;

/**
 * The agent-wide storm line: more notifications and approvals in an hour than the run bounds let
 * the agent's runs make (NOTIFICATIONS_PER_HOUR + APPROVALS_PER_HOUR) means something is getting
 * past them, e.g. notices no run makes.
 */
export function agentStormLimit(config: Pick<AgentDeps["config"], "bounds">): number {
  return config.bounds.notificationsPerHour + config.bounds.approvalsPerHour;
}

/** The conditions that hold, with their detail lines, from conditionReads' rows (pure). */
export function conditionsFrom(deps: Pick<AgentDeps, "config" | "llm">, rows: ConditionRows, now: number): Map<ConditionKind, string> {
  const { config } = deps;
  const details: Record<ConditionKind, () => string | null> = {
    events_waiting: () => {
      const row = rows["events_waiting.late"][0];
      const n = Number(row?.n ?? 0);
      return n
        ? `${n} event(s) waiting longer than twice their debounce window plus a tick (oldest since ${iso(Number(row!.oldest))})`
        : null;
    },
    failed_runs: () => {
      const last = rows["failed_runs.last"];
      const limit = config.watchdogFailedRuns;
      if (last.length < limit || last.some((r) => r.status === "succeeded")) return null;
      return `the last ${limit} runs failed or crashed (runs ${last.map((r) => r.runId).join(", ")}; latest error: ${last[0]!.error?.slice(0, 200) ?? "none recorded"})`;
    },
    poison: () => {
      const n = Number(rows["poison.events"][0]?.n ?? 0) + Number(rows["poison.wakes"][0]?.n ?? 0);
      return n ? `${n} event(s) or wake(s) dropped as poison in the last 24 hours` : null;
    },
    context_budget: () => {
      const failing = rows["context_budget.failing"];
      return failing.length
        ? `compaction failed or the prompt could not fit the budget in ${failing.length} run(s) in the last hour (latest run ${failing[0]!.runId})`
        : null;
    },
    llm_breaker_open: () => {
      const row = rows["llm_breaker_open.breaker"][0];
      if (!deps.llm || !row) return null;
      return `the LLM circuit breaker of ${deps.llm.model} is open until ${iso(row.openUntil!)} after ${row.failures} failures; the rules policy decides meanwhile`;
    },
    notification_storm: () => {
      const counts = new Map<string, number>();
      for (const row of [...rows["notification_storm.sent"], ...rows["notification_storm.asked"]])
        counts.set(row.instanceId!, (counts.get(row.instanceId!) ?? 0) + Number(row.n));
      const stormy = [...counts].filter(([, n]) => n > config.watchdogNotifyPerHour).sort(([a], [b]) => a.localeCompare(b));
      const agentWide = Number(rows["notification_storm.agentSent"][0]?.n ?? 0) + Number(rows["notification_storm.agentAsked"][0]?.n ?? 0);
      const agentLimit = agentStormLimit(config);
      const parts = [
        ...(stormy.length
          ? [
              `more than ${config.watchdogNotifyPerHour} notifications or approvals in an hour for ${stormy.map(([id, n]) => `${id} (${n})`).join(", ")}`,
            ]
          : []),
        ...(agentWide > agentLimit
          ? [`more than ${agentLimit} notifications or approvals in an hour across the agent (${agentWide})`]
          : []),
      ];
      return parts.length ? parts.join("; ") : null;
    },
    wake_budget_exhausted: () => {
      const budget = wakeBudgetFrom(config.wakesPerHour, rows["wake_budget_exhausted.recent"], now);
      if (budget.limit === 0 || budget.used < budget.limit) return null;
      return `the agent used its ${budget.limit} self-scheduled checks for this hour${budget.nextFreeAt !== null ? `; the next frees at ${iso(budget.nextFreeAt)}` : ""}`;
    },
    scheduler_failing: () => {
      const row = rows["scheduler_failing.health"][0];
      if (row?.failingSince == null) return null;
      return `the ${row.kind} scheduler has refused publishes since ${iso(row.failingSince)} (latest: ${row.lastError ?? "no error recorded"}); each cron invocation performs due runs itself until it takes them again`;
    },
    fleet_breaker_open: () => {
      const share = fleetShare(rows["fleet_breaker_open.instances"], rows["fleet_breaker_open.listed"][0]?.at ?? null);
      if (!breakerTrips(config, share)) return null;
      const lifted = liftedFrom(rows["fleet_breaker_open.episode"], rows["fleet_breaker_open.lifts"]);
      return `${describeShare(config, share)}${lifted ? ` (${LIFTED_NOTE})` : ""}`;
    },
  };
  const held = new Map<ConditionKind, string>();
  for (const kind of CONDITION_KINDS) {
    const detail = details[kind]();
    if (detail !== null) held.set(kind, detail);
  }
  return held;
}
