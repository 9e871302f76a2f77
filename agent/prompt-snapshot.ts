/**
 * The fleet snapshot the model reads each run, fresh from the database: a header with the time,
 * the instance count and spend today against the daily limit, then one JSON line per instance in
 * a `<fleet_snapshot>` block (labels and status messages are text no operator typed) with its
 * state, $/h (the running price, or storage while stopped), GPU utilisation with its age, idle
 * minutes and an attention marker. Idle needs fresh telemetry: utilisation older than
 * TELEMETRY_STALE_S is shown as stale and never counts as idle. Instances needing attention come
 * first, so a cut snapshot still shows them; webhook-only instances (no provider lists them) come
 * after all of the provider's, marked `webhookOnly`.
 */
import { iso, MINUTE_MS } from "../runtime/time.ts";
import type { Config } from "../runtime/config.ts";
import type { instances } from "../schema/index.ts";
import { attentionMarker } from "./prompt-attention.ts";
import { dataBlock } from "./prompt-data.ts";
import { costPerHour } from "../fleet/instance-cost.ts";
import { idleState } from "../fleet/idle.ts";

type InstanceRow = typeof instances.$inferSelect;

const HEALTHY = new Set(["running", "stopped"]);
/** Characters of a status message the snapshot shows at most. */
const STATUS_MESSAGE_MAX_CHARS = 200;

export const SNAPSHOT_CUT = "fleet snapshot (use list_instances)";

export interface SnapshotInput {
  rows: readonly InstanceRow[];
  /** sum(instance_spend.usd) for the agent and today's UTC day. */
  spendTodayUsd: number;
  now: number;
}

const usd = (n: number) => `$${n.toFixed(2)}`;

/** The whole snapshot, before it is cut to its share of the budget. */
export function snapshotText({ rows, spendTodayUsd, now }: SnapshotInput, config: Pick<Config, "loadingTimeoutMs" | "economics">): string {
  const limit = config.economics.spendLimitPerDayUsd;
  const spend = `spend today ${usd(spendTodayUsd)}${limit === null ? " (no daily limit)" : ` of ${usd(limit)} daily limit (${Math.round((spendTodayUsd / limit) * 100)} %)`}`;
  if (rows.length === 0) return `Fleet snapshot at ${iso(now)}: no instances known; ${spend}.`;
  // Webhook-only instances (no provider lists them; anyone holding the agent's secret can report
  // one) come after every provider instance whatever their state, so they never push one past the cut.
  const ordered = [...rows].sort(
    (a, b) => Number(a.webhookOnly) - Number(b.webhookOnly) || Number(HEALTHY.has(a.state)) - Number(HEALTHY.has(b.state)) || a.id.localeCompare(b.id),
  );
  return `Fleet snapshot at ${iso(now)} (${rows.length} instances; ${spend}):\n${dataBlock("fleet_snapshot", ordered.map((r) => instanceData(r, now, config)))}`;
}

function instanceData(r: InstanceRow, now: number, config: Pick<Config, "loadingTimeoutMs" | "economics">) {
  const perHour = costPerHour(r);
  const fresh = r.gpuUtilAt !== null && now - r.gpuUtilAt <= config.economics.telemetryStaleMs;
  const idle = idleState(r, now, config.economics);
  const attention = attentionMarker(r, now, config.loadingTimeoutMs);
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
    ...(r.interruptible ? { interruptible: true } : {}),
    ...(r.endsAt !== null ? { endsAt: iso(r.endsAt) } : {}),
    ...(r.statusMessage ? { statusMessage: r.statusMessage.slice(0, STATUS_MESSAGE_MAX_CHARS) } : {}),
    ...(attention ? { attention } : {}),
    ...(r.webhookOnly ? { webhookOnly: true } : {}),
  };
}
