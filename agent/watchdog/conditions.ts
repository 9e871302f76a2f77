/**
 * What the loop watchdog looks for, per agent: each check reads the database and answers with
 * a detail line when its condition holds now, or null. Read-only; watchdog.ts stores the
 * transitions and tells a human.
 */
import { and, desc, eq, gt, inArray, isNotNull, like, lt, or, sql } from "drizzle-orm";
import type { Deps } from "../../runtime/deps.ts";
import { approvals, breakers, events, notifications, runs, wakes } from "../../schema/index.ts";
import { debounceWindow } from "../../triggers/request-run.ts";
import { wakeBudget } from "../../triggers/wake-budget.ts";
import { OVERDUE_MS } from "../../triggers/cron-tick.ts";
import { LLM_BREAKER } from "../run-agent.ts";

export const CONDITION_KINDS = [
  "events_waiting",
  "failed_runs",
  "poison",
  "context_budget",
  "llm_breaker_open",
  "notification_storm",
  "wake_budget_exhausted",
] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

const HOUR_MS = 3_600_000;
/** How long a poison event keeps its condition up (until a human has had a day to look). */
export const POISON_WINDOW_MS = 24 * HOUR_MS;
/** The cron tick's period: an event may wait this much on top of its window before a run. */
const TICK_MS = OVERDUE_MS;

type Check = (deps: Deps, agentId: string, now: number) => Promise<string | null>;

const iso = (ms: number) => new Date(ms).toISOString();

const eventsWaiting: Check = async (deps, agentId, now) => {
  const late = (priority: 0 | 1) =>
    and(eq(events.priority, priority), lt(events.createdAt, now - 2 * debounceWindow(deps.config, priority) - TICK_MS));
  const [row] = await deps.db
    .select({ n: sql<number>`count(*)`, oldest: sql<number | null>`min(${events.createdAt})` })
    .from(events)
    .where(and(eq(events.agentId, agentId), eq(events.status, "pending"), or(late(0), late(1))));
  const n = Number(row?.n ?? 0);
  return n ? `${n} event(s) waiting longer than twice their debounce window plus a tick (oldest since ${iso(Number(row!.oldest))})` : null;
};

const failedRuns: Check = async (deps, agentId) => {
  const limit = deps.config.watchdogFailedRuns;
  const last = await deps.db
    .select({ runId: runs.runId, status: runs.status, error: runs.error })
    .from(runs)
    .where(and(eq(runs.agentId, agentId), inArray(runs.status, ["succeeded", "failed", "crashed"])))
    .orderBy(desc(runs.runId))
    .limit(limit);
  if (last.length < limit || last.some((r) => r.status === "succeeded")) return null;
  return `the last ${limit} runs failed or crashed (runs ${last.map((r) => r.runId).join(", ")}; latest error: ${last[0]!.error?.slice(0, 200) ?? "none recorded"})`;
};

const poison: Check = async (deps, agentId, now) => {
  const since = now - POISON_WINDOW_MS;
  const [ev, wk] = await deps.db.batch([
    deps.db
      .select({ n: sql<number>`count(*)` })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.status, "dropped"), eq(events.dropReason, "poison"), gt(sql`coalesce(${events.consumedAt}, ${events.createdAt})`, since))),
    deps.db
      .select({ n: sql<number>`count(*)` })
      .from(wakes)
      .where(and(eq(wakes.agentId, agentId), eq(wakes.status, "dropped"), gt(sql`coalesce(${wakes.consumedAt}, ${wakes.dueAt})`, since))),
  ]);
  const n = Number(ev[0]?.n ?? 0) + Number(wk[0]?.n ?? 0);
  return n ? `${n} event(s) or wake(s) dropped as poison in the last 24 hours` : null;
};

const contextBudget: Check = async (deps, agentId, now) => {
  const failing = await deps.db
    .select({ runId: runs.runId })
    .from(runs)
    .where(
      and(
        eq(runs.agentId, agentId),
        gt(runs.startedAt, now - HOUR_MS),
        or(like(runs.error, "%compaction could not summarise%"), like(runs.error, "%cannot fit the budget%")),
      ),
    )
    .orderBy(desc(runs.runId));
  return failing.length ? `compaction failed or the prompt could not fit the budget in ${failing.length} run(s) in the last hour (latest run ${failing[0]!.runId})` : null;
};

const llmBreakerOpen: Check = async (deps, _agentId, now) => {
  if (!deps.llm) return null;
  const [row] = await deps.db.select().from(breakers).where(and(eq(breakers.name, LLM_BREAKER), isNotNull(breakers.openUntil), gt(breakers.openUntil, now)));
  return row ? `the LLM circuit breaker is open until ${iso(row.openUntil!)} after ${row.failures} failures; the rules policy decides meanwhile` : null;
};

const notificationStorm: Check = async (deps, agentId, now) => {
  const since = now - HOUR_MS;
  const [sent, asked] = await deps.db.batch([
    deps.db
      .select({ instanceId: notifications.instanceId, n: sql<number>`count(*)` })
      .from(notifications)
      .where(and(eq(notifications.agentId, agentId), isNotNull(notifications.instanceId), gt(notifications.createdAt, since)))
      .groupBy(notifications.instanceId),
    deps.db
      .select({ instanceId: approvals.instanceId, n: sql<number>`count(*)` })
      .from(approvals)
      .where(and(eq(approvals.agentId, agentId), isNotNull(approvals.instanceId), gt(approvals.createdAt, since)))
      .groupBy(approvals.instanceId),
  ]);
  const counts = new Map<string, number>();
  for (const row of [...sent, ...asked]) counts.set(row.instanceId!, (counts.get(row.instanceId!) ?? 0) + Number(row.n));
  const stormy = [...counts].filter(([, n]) => n > deps.config.watchdogNotifyPerHour).sort(([a], [b]) => a.localeCompare(b));
  if (stormy.length === 0) return null;
  return `more than ${deps.config.watchdogNotifyPerHour} notifications or approvals in an hour for ${stormy.map(([id, n]) => `${id} (${n})`).join(", ")}`;
};

const wakeBudgetExhausted: Check = async (deps, agentId) => {
  const budget = await wakeBudget(deps, agentId);
  if (budget.limit === 0 || budget.used < budget.limit) return null;
  return `the agent used its ${budget.limit} self-scheduled checks for this hour${budget.nextFreeAt !== null ? `; the next frees at ${iso(budget.nextFreeAt)}` : ""}`;
};

const CHECKS: Record<ConditionKind, Check> = {
  events_waiting: eventsWaiting,
  failed_runs: failedRuns,
  poison,
  context_budget: contextBudget,
  llm_breaker_open: llmBreakerOpen,
  notification_storm: notificationStorm,
  wake_budget_exhausted: wakeBudgetExhausted,
};

/** The conditions that hold now, with their detail lines. */
export async function observeConditions(deps: Deps, agentId: string): Promise<Map<ConditionKind, string>> {
  const now = deps.clock.now();
  const held = new Map<ConditionKind, string>();
  for (const kind of CONDITION_KINDS) {
    const detail = await CHECKS[kind](deps, agentId, now);
    if (detail !== null) held.set(kind, detail);
  }
  return held;
}
