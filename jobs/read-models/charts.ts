/**
 * Read model of what the overview's charts draw, read from the audit tables: runs of the last 24 hours by
 * outcome (per hour), the largest prompt of each recent run against the budget (with the runs
 * where compaction ran), and actions and notifications per hour. Hours are UTC clock hours, the
 * last one the current, so a chart re-rendered by the live updates only grows its last column.
 */
import { and, desc, eq, gte } from "drizzle-orm";
import type { Deps } from "../deps.ts";
import { actions, notifications, runs } from "../../schema/index.ts";

/** One series of a chart; the tone is a CSS class (`fill-ok`, `fill-bad`…) of the stylesheet. */
export interface Series {
  key: string;
  label: string;
  tone: string;
}

/** One column of a chart: its label and a value per series key. */
export interface Bucket {
  label: string;
  values: Record<string, number>;
}

export const HOURS = 24;
export const TOKEN_RUNS = 30;
const HOUR_MS = 3_600_000;

export const RUN_OUTCOMES: Series[] = [
  { key: "acted", label: "succeeded (acted or replied)", tone: "fill-ok" },
  { key: "noop", label: "no-op", tone: "fill-neutral" },
  { key: "rules", label: "rules policy", tone: "fill-info" },
  { key: "failed", label: "failed", tone: "fill-warn" },
  { key: "crashed", label: "crashed", tone: "fill-bad" },
];

export const ACTIVITY: Series[] = [
  { key: "actions", label: "actions", tone: "fill-info" },
  { key: "notifications", label: "notifications", tone: "fill-warn" },
];

export const PROMPT_SERIES: Series[] = [{ key: "tokens", label: "largest prompt (tokens)", tone: "fill-info" }];

/** Which outcome series a finished run counts in; null for one still running. */
export function runOutcomeKey(run: { status: string; noop: boolean | null; decider: string | null }): string | null {
  if (run.status === "failed") return "failed";
  if (run.status === "crashed") return "crashed";
  if (run.status === "skipped") return "noop";
  if (run.status !== "succeeded") return null;
  if (run.decider === "rules") return "rules";
  return run.noop ? "noop" : "acted";
}

function hourBuckets(now: number, keys: string[]): { buckets: Bucket[]; index: (at: number) => number; since: number } {
  const current = Math.floor(now / HOUR_MS) * HOUR_MS;
  const since = current - (HOURS - 1) * HOUR_MS;
  const buckets = Array.from({ length: HOURS }, (_, i) => ({
    label: `${new Date(since + i * HOUR_MS).toISOString().slice(11, 13)}h`,
    values: Object.fromEntries(keys.map((k) => [k, 0])),
  }));
  return { buckets, since, index: (at) => Math.floor((at - since) / HOUR_MS) };
}

export async function runsByHour(deps: Pick<Deps, "db" | "clock">, agentId: string) {
  const now = deps.clock.now();
  const { buckets, since, index } = hourBuckets(
    now,
    RUN_OUTCOMES.map((s) => s.key),
  );
  const rows = await deps.db
    .select({ status: runs.status, noop: runs.noop, decider: runs.decider, startedAt: runs.startedAt })
    .from(runs)
    .where(and(eq(runs.agentId, agentId), gte(runs.startedAt, since)));
  const totals: Record<string, number> = Object.fromEntries(RUN_OUTCOMES.map((s) => [s.key, 0]));
  for (const row of rows) {
    const key = runOutcomeKey(row);
    const bucket = buckets[index(row.startedAt)];
    if (!key || !bucket) continue;
    bucket.values[key] = (bucket.values[key] ?? 0) + 1;
    totals[key] = (totals[key] ?? 0) + 1;
  }
  return { buckets, totals };
}

/** A compaction record says compaction ran when any call shrank its prompt or changed history. */
export function compactionRan(record: unknown): boolean {
  const calls = (record as { calls?: unknown } | null)?.calls;
  const reports = Array.isArray(calls) ? calls : record && typeof record === "object" ? [record] : [];
  return reports.some((r: Record<string, unknown>) => {
    const counts = ["stubbedToolOutputs", "droppedNoopTurns", "trimmedTurns"].some((k) => Number(r?.[k] ?? 0) > 0);
    const summarized = Boolean(r?.summarized);
    return counts || summarized || r?.truncatedToolOutputs === true || r?.truncatedInput === true;
  });
}

export async function promptTokensPerRun(deps: Pick<Deps, "db" | "config">, agentId: string) {
  const rows = await deps.db
    .select({ runId: runs.runId, contextTokens: runs.contextTokens, compaction: runs.compaction })
    .from(runs)
    .where(eq(runs.agentId, agentId))
    .orderBy(desc(runs.runId))
    .limit(TOKEN_RUNS);
  const ordered = rows.reverse();
  const buckets: Bucket[] = ordered.map((r) => ({ label: `#${r.runId}`, values: { tokens: r.contextTokens } }));
  const marks = ordered.flatMap((r, index) => (compactionRan(r.compaction) ? [{ index, label: `run #${r.runId}` }] : []));
  return { buckets, marks, budget: deps.config.contextBudgetTokens, largest: Math.max(0, ...ordered.map((r) => r.contextTokens)) };
}

export async function activityByHour(deps: Pick<Deps, "db" | "clock">, agentId: string) {
  const now = deps.clock.now();
  const { buckets, since, index } = hourBuckets(
    now,
    ACTIVITY.map((s) => s.key),
  );
  const [actionRows, notificationRows] = await deps.db.batch([
    deps.db
      .select({ at: actions.createdAt })
      .from(actions)
      .where(and(eq(actions.agentId, agentId), gte(actions.createdAt, since))),
    deps.db
      .select({ at: notifications.createdAt })
      .from(notifications)
      .where(and(eq(notifications.agentId, agentId), gte(notifications.createdAt, since))),
  ]);
  const count = (at: number, key: string) => {
    const bucket = buckets[index(at)];
    if (bucket) bucket.values[key] = (bucket.values[key] ?? 0) + 1;
  };
  for (const row of actionRows) count(row.at, "actions");
  for (const row of notificationRows) count(row.at, "notifications");
  return { buckets, actions: actionRows.length, notifications: notificationRows.length };
}

export type ChartsData = Awaited<ReturnType<typeof loadCharts>>;

/** The overview's three charts, read together (they render as one live region). */
export async function loadCharts(deps: Pick<Deps, "db" | "clock" | "config">, agentId: string) {
  const [runs, prompts, activity] = await Promise.all([
    runsByHour(deps, agentId),
    promptTokensPerRun(deps, agentId),
    activityByHour(deps, agentId),
  ]);
  return { runs, prompts, activity };
}
