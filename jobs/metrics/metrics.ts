/**
 * GET /metrics (issue 36, item 1): every agent's fleet, spend, runs, LLM tokens, actions,
 * approvals, watchdog conditions and notification outcomes, and the scheduler's state, as
 * Prometheus families (jobs/metrics/exposition.ts). One batch, one round trip: each family is a
 * grouped count over an index that covers it (runs_metrics, actions_metrics from migration 0008;
 * approvals_status, watchdog_conditions_agent), the live instances, and today's spend per agent
 * read as GET /spend reads it (accrued plus the stretch not yet accrued). Counters are counts of
 * rows no retention pass deletes (runs, actions, notification deliveries), so they only grow.
 */
import { and, count, eq, isNull, sql, sum } from "drizzle-orm";
import type { Deps } from "../deps.ts";
import {
  actions,
  agents,
  approvals,
  deliveries,
  instances,
  instanceSpend,
  notificationDeliveries,
  notifications,
  runs,
  schedulerHealth,
  watchdogConditions,
} from "../../schema/index.ts";
import { RENTED_STATES } from "../../fleet/economics/instance-cost.ts";
import { unaccruedTodaySql } from "../../fleet/economics/unaccrued.ts";
import { utcDay } from "../../fleet/economics/spend.ts";
import { renderFamilies, type Family, type HistogramSample } from "./exposition.ts";

/** Run duration buckets, in seconds (a run is seconds to a few minutes; RUN_LEASE bounds it). */
export const RUN_DURATION_BUCKETS_S = [1, 5, 15, 30, 60, 120, 300, 600] as const;

const n = (value: unknown) => Number(value ?? 0);

export async function renderMetrics(deps: Pick<Deps, "db" | "clock">): Promise<string> {
  const { db } = deps;
  const now = deps.clock.now();
  const durationMs = sql`(${runs.finishedAt} - ${runs.startedAt})`;
  const [fleet, spend, runRows, actionRows, pending, conditions, delivered, scheduler, due] = await db.batch([
    db
      .select({
        agent: instances.agentId,
        state: instances.state,
        count: count(),
        price: sum(instances.pricePerHour),
        storage: sum(instances.storagePerHour),
      })
      .from(instances)
      .where(isNull(instances.goneAt))
      .groupBy(instances.agentId, instances.state),
    db
      .select({
        agent: agents.id,
        usd: sql<number>`(select coalesce(sum(s.usd), 0) from ${instanceSpend} s where s.agent_id = ${agents.id} and s.day = ${utcDay(now)}) + ${unaccruedTodaySql(agents.id, now)}`,
      })
      .from(agents)
      .where(isNull(agents.archivedAt)),
    db
      .select({
        agent: runs.agentId,
        status: runs.status,
        decider: runs.decider,
        count: count(),
        promptTokens: sum(runs.promptTokens),
        completionTokens: sum(runs.completionTokens),
        finished: sql<number>`count(${runs.finishedAt})`,
        seconds: sql<number>`coalesce(sum(${durationMs}), 0) / 1000.0`,
        ...Object.fromEntries(
          RUN_DURATION_BUCKETS_S.map((le) => [`le${le}`, sql<number>`sum(case when ${durationMs} <= ${le * 1000} then 1 else 0 end)`]),
        ),
      })
      .from(runs)
      .groupBy(runs.agentId, runs.status, runs.decider),
    db
      .select({ agent: actions.agentId, kind: actions.kind, status: actions.status, count: count() })
      .from(actions)
      .groupBy(actions.agentId, actions.kind, actions.status),
    db
      .select({ agent: approvals.agentId, count: count() })
      .from(approvals)
      .where(eq(approvals.status, "pending"))
      .groupBy(approvals.agentId),
    db
      .select({ agent: watchdogConditions.agentId, kind: watchdogConditions.kind, count: count() })
      .from(watchdogConditions)
      .where(isNull(watchdogConditions.clearedAt))
      .groupBy(watchdogConditions.agentId, watchdogConditions.kind),
    db
      .select({
        agent: notifications.agentId,
        channel: notificationDeliveries.channel,
        outcome: notificationDeliveries.status,
        count: count(),
      })
      .from(notificationDeliveries)
      .innerJoin(notifications, eq(notifications.id, notificationDeliveries.notificationId))
      .groupBy(notifications.agentId, notificationDeliveries.channel, notificationDeliveries.status),
    db.select().from(schedulerHealth),
    db
      .select({ due: count() })
      .from(deliveries)
      .where(and(eq(deliveries.status, "pending"), sql`${deliveries.dueAt} <= ${now}`)),
  ]);

  const burn = new Map<string, number>();
  for (const row of fleet) {
    const rate = RENTED_STATES.has(row.state) ? n(row.price) : n(row.storage);
    burn.set(row.agent, (burn.get(row.agent) ?? 0) + rate);
  }
  const tokens = new Map<string, { prompt: number; completion: number }>();
  const durations = new Map<string, HistogramSample>();
  for (const row of runRows) {
    const t = tokens.get(row.agent) ?? { prompt: 0, completion: 0 };
    t.prompt += n(row.promptTokens);
    t.completion += n(row.completionTokens);
    tokens.set(row.agent, t);
    const h = durations.get(row.agent) ?? {
      labels: { agent: row.agent },
      buckets: RUN_DURATION_BUCKETS_S.map((le) => [le, 0] as [number, number]),
      count: 0,
      sum: 0,
    };
    const perBucket = row as unknown as Record<string, unknown>;
    h.buckets = h.buckets.map(([le, c]) => [le, c + n(perBucket[`le${le}`])]);
    h.count += n(row.finished);
    h.sum += n(row.seconds);
    durations.set(row.agent, h);
  }
  const agentIds = spend.map((row) => row.agent);

  const families: Family[] = [
    {
      name: "fleetwarden_instances",
      help: "Instances the agent supervises, by state (gone ones excluded).",
      type: "gauge",
      samples: fleet.map((row) => ({ labels: { agent: row.agent, state: row.state }, value: n(row.count) })),
    },
    {
      name: "fleetwarden_spend_today_usd",
      help: "Estimated spend of the agent's fleet in the current UTC day, up to now.",
      type: "gauge",
      samples: spend.map((row) => ({ labels: { agent: row.agent }, value: Math.round(n(row.usd) * 10_000) / 10_000 })),
    },
    {
      name: "fleetwarden_burn_usd_per_hour",
      help: "What the agent's fleet costs per hour in the states last seen.",
      type: "gauge",
      samples: agentIds.map((agent) => ({ labels: { agent }, value: Math.round((burn.get(agent) ?? 0) * 10_000) / 10_000 })),
    },
    {
      name: "fleetwarden_runs_total",
      help: "Agent runs, by final status and what decided (llm, rules, none).",
      type: "counter",
      samples: runRows.map((row) => ({
        labels: { agent: row.agent, status: row.status, decider: row.decider ?? "none" },
        value: n(row.count),
      })),
    },
    {
      name: "fleetwarden_llm_prompt_tokens_total",
      help: "Prompt tokens sent to the LLM, as its usage reported them.",
      type: "counter",
      samples: [...tokens].map(([agent, t]) => ({ labels: { agent }, value: t.prompt })),
    },
    {
      name: "fleetwarden_llm_completion_tokens_total",
      help: "Completion tokens the LLM answered, as its usage reported them.",
      type: "counter",
      samples: [...tokens].map(([agent, t]) => ({ labels: { agent }, value: t.completion })),
    },
    {
      name: "fleetwarden_run_duration_seconds",
      help: "How long finished runs took, from claim to finish.",
      type: "histogram",
      samples: [...durations.values()],
    },
    {
      name: "fleetwarden_actions_total",
      help: "Actions requested through the action table, by kind and current status.",
      type: "counter",
      samples: actionRows.map((row) => ({ labels: { agent: row.agent, kind: row.kind, status: row.status }, value: n(row.count) })),
    },
    {
      name: "fleetwarden_pending_approvals",
      help: "Approval requests waiting for a human.",
      type: "gauge",
      samples: agentIds.map((agent) => ({ labels: { agent }, value: n(pending.find((p) => p.agent === agent)?.count) })),
    },
    {
      name: "fleetwarden_watchdog_conditions",
      help: "Open watchdog conditions, by kind.",
      type: "gauge",
      samples: conditions.map((row) => ({ labels: { agent: row.agent, kind: row.kind }, value: n(row.count) })),
    },
    {
      name: "fleetwarden_notifications_total",
      help: "Notification deliveries, by channel and outcome (pending, delivered, failed).",
      type: "counter",
      samples: delivered.map((row) => ({ labels: { agent: row.agent, channel: row.channel, outcome: row.outcome }, value: n(row.count) })),
    },
    {
      name: "fleetwarden_scheduler_failing",
      help: "1 while the scheduler refuses publishes (the cron tick does due work itself), else 0.",
      type: "gauge",
      samples: scheduler.map((row) => ({ labels: { scheduler: row.kind }, value: row.failingSince === null ? 0 : 1 })),
    },
    {
      name: "fleetwarden_scheduler_last_success_timestamp_seconds",
      help: "When the scheduler last accepted a publish after failing, or first did (Unix seconds).",
      type: "gauge",
      samples: scheduler
        .filter((row) => row.lastSuccessAt !== null)
        .map((row) => ({ labels: { scheduler: row.kind }, value: Math.floor(n(row.lastSuccessAt) / 1000) })),
    },
    {
      name: "fleetwarden_scheduler_backlog_due",
      help: "Local scheduler deliveries due and not yet delivered (0 on QStash, which keeps its own queue).",
      type: "gauge",
      samples: [{ labels: {}, value: n(due[0]?.due) }],
    },
  ];
  return renderFamilies(families);
}
