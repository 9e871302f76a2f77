/**
 * The fleet snapshot the model reads each run, fresh from the database: a header with the time,
 * the instance count and spend today against the daily limit, then JSON lines in a
 * `<fleet_snapshot>` block (labels and status messages are text no operator typed). An instance
 * that needs a look is shown in full — its state, $/h (the running price, or storage while
 * stopped), GPU utilisation with its age, idle minutes and an attention marker; idle needs fresh
 * telemetry (older than TELEMETRY_STALE_S is shown as stale and never counts as idle), its
 * progress counter and, when it has not moved for STALL_AFTER_S, `stalled` with the signal
 * (fleet/instances/stall.ts; a stalled instance is never quiet). On a fleet
 * larger than SNAPSHOT_FULL_MAX, the quiet rest (running or stopped, busy or without telemetry,
 * unchanged for RECENT_CHANGE_MS, not named by this run's events) is one summary line: counts by
 * state and by GPU with their $/h; `list_instances` reads them. The snapshot is sent on every
 * call, so this keeps a big fleet's calls small. Instances needing attention come first, so a cut
 * snapshot still shows them.
 * An instance whose only recent "change" is its first sighting by reconciliation (`firstSeen`: its
 * state is the one reconciliation first listed it in, agent/prompt/prompt-reads.ts) is unchanged
 * for this purpose: on a fleet that has just been listed every instance is new, and listing all of
 * them in full on every call made one incident on 100 instances cost about 25,000 prompt tokens
 * (issue 37; bench/agent-cost.bench.ts).
 * Webhook-only instances (no provider lists them) come after all of the provider's, whatever
 * their state, marked `webhookOnly`.
 */
import { iso, MINUTE_MS } from "../../runtime/time.ts";
import type { Config } from "../../runtime/config.ts";
import type { instances } from "../../schema/index.ts";
import { attentionMarker } from "./prompt-attention.ts";
import { dataBlock } from "./prompt-data.ts";
import { costPerHour } from "../../fleet/economics/instance-cost.ts";
import { idleState } from "../../fleet/economics/idle.ts";
import { stallSettings, stallState } from "../../fleet/instances/stall.ts";

type InstanceRow = typeof instances.$inferSelect;

const HEALTHY = new Set(["running", "stopped"]);
/** Characters of a status message the snapshot shows at most. */
const STATUS_MESSAGE_MAX_CHARS = 200;

export const SNAPSHOT_CUT = "fleet snapshot (use list_instances)";
/** Up to this many instances every one is shown in full. */
export const SNAPSHOT_FULL_MAX = 20;
/** An instance whose state changed this recently is shown in full (a restart being watched). */
export const RECENT_CHANGE_MS = 30 * MINUTE_MS;

export interface SnapshotInput {
  rows: readonly InstanceRow[];
  /** sum(instance_spend.usd) for the agent and today's UTC day. */
  spendTodayUsd: number;
  now: number;
  /** Instances this run's events name: always in full. */
  focus?: ReadonlySet<string>;
  /** Instances still in the state reconciliation first listed them in: not a recent change. */
  firstSeen?: ReadonlySet<string>;
}

const usd = (n: number) => `$${n.toFixed(2)}`;

/** The whole snapshot, before it is cut to its share of the budget. */
export function snapshotText(
  { rows, spendTodayUsd, now, focus, firstSeen }: SnapshotInput,
  config: Pick<Config, "loadingTimeoutMs" | "economics" | "stall">,
): string {
  const limit = config.economics.spendLimitPerDayUsd;
  const spend = `spend today ${usd(spendTodayUsd)}${limit === null ? " (no daily limit)" : ` of ${usd(limit)} daily limit (${Math.round((spendTodayUsd / limit) * 100)} %)`}`;
  if (rows.length === 0) return `Fleet snapshot at ${iso(now)}: no instances known; ${spend}.`;
  // Webhook-only instances (no provider lists them; anyone holding the agent's secret can report
  // one) come after every provider instance whatever their state, so they never push one past the cut.
  const ordered = [...rows].sort(
    (a, b) =>
      Number(a.webhookOnly) - Number(b.webhookOnly) ||
      Number(HEALTHY.has(a.state)) - Number(HEALTHY.has(b.state)) ||
      a.id.localeCompare(b.id),
  );
  const shown = rows.length <= SNAPSHOT_FULL_MAX ? ordered : ordered.filter((r) => !quiet(r, now, config, focus, firstSeen));
  const quietRows = rows.length <= SNAPSHOT_FULL_MAX ? [] : ordered.filter((r) => quiet(r, now, config, focus, firstSeen));
  const values = [...shown.map((r) => instanceData(r, now, config)), ...(quietRows.length ? [quietSummary(quietRows)] : [])];
  return `Fleet snapshot at ${iso(now)} (${rows.length} instances; ${spend}):\n${dataBlock("fleet_snapshot", values)}`;
}

/** Nothing to look at: running or stopped, not idle, telemetry fresh or absent, unchanged lately, not named by this run. */
function quiet(
  r: InstanceRow,
  now: number,
  config: Pick<Config, "loadingTimeoutMs" | "economics" | "stall">,
  focus: ReadonlySet<string> | undefined,
  firstSeen: ReadonlySet<string> | undefined,
): boolean {
  if (!HEALTHY.has(r.state) || focus?.has(r.id)) return false;
  if (now - r.stateAt < RECENT_CHANGE_MS && !firstSeen?.has(r.id)) return false;
  if (attentionMarker(r, now, config.loadingTimeoutMs) || idleState(r, now, config.economics).idle) return false;
  if (stallState(r, now, stallSettings(config)).stalled) return false;
  const stale = r.gpuUtilAt !== null && now - r.gpuUtilAt > config.economics.telemetryStaleMs;
  return !stale && !(r.endsAt !== null && r.endsAt - now <= config.economics.expiryWarnMs);
}

/** The quiet instances as one line: how many per state, and per GPU how many and what they cost an hour. */
function quietSummary(rows: readonly InstanceRow[]) {
  const byState: Record<string, number> = {};
  const byGpu: Record<string, { count: number; usdPerHour: number }> = {};
  for (const r of rows) {
    byState[r.state] = (byState[r.state] ?? 0) + 1;
    const gpu = r.gpuName ? `${r.gpuCount ?? 1}x ${r.gpuName}` : "unknown GPU";
    const entry = (byGpu[gpu] ??= { count: 0, usdPerHour: 0 });
    entry.count++;
    entry.usdPerHour = Math.round((entry.usdPerHour + (costPerHour(r) ?? 0)) * 100) / 100;
  }
  return { quiet: rows.length, note: "running or stopped, nothing to look at; list_instances shows each", byState, byGpu };
}

function instanceData(r: InstanceRow, now: number, config: Pick<Config, "loadingTimeoutMs" | "economics" | "stall">) {
  const perHour = costPerHour(r);
  const fresh = r.gpuUtilAt !== null && now - r.gpuUtilAt <= config.economics.telemetryStaleMs;
  const idle = idleState(r, now, config.economics);
  const attention = attentionMarker(r, now, config.loadingTimeoutMs);
  const stall = stallState(r, now, stallSettings(config));
  return {
    id: r.id,
    ...(r.label ? { label: r.label } : {}),
    state: r.state,
    since: iso(r.stateAt),
    lastSeen: iso(r.lastSeenAt),
    ...(r.gpuName ? { gpu: `${r.gpuCount ?? 1}x ${r.gpuName}` } : {}),
    ...(perHour !== null ? { usdPerHour: perHour } : {}),
    ...(r.gpuUtil !== null && r.gpuUtilAt !== null
      ? { gpuUtilPct: r.gpuUtil, gpuUtilAgeS: Math.round((now - r.gpuUtilAt) / 1000), ...(fresh ? {} : { telemetry: "stale" }) }
      : {}),
    ...(idle.idle ? { idleMin: Math.floor(idle.forMs / MINUTE_MS) } : {}),
    ...(r.progress != null ? { progress: r.progress } : {}),
    ...(stall.stalled ? { stalled: stall.signal } : {}),
    ...(r.interruptible ? { interruptible: true } : {}),
    ...(r.endsAt !== null ? { endsAt: iso(r.endsAt) } : {}),
    ...(r.statusMessage ? { statusMessage: r.statusMessage.slice(0, STATUS_MESSAGE_MAX_CHARS) } : {}),
    ...(attention ? { attention } : {}),
    ...(r.webhookOnly ? { webhookOnly: true } : {}),
  };
}
