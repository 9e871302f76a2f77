/**
 * Instance state changes, from any source (webhook, reconciliation, heartbeat check, an action),
 * enter here. One database batch stores the inbox event (idempotent on its dedup key), upserts
 * the instance's latest state only if the change is not older than the one stored, appends the
 * instance's history, and requests a run. A change older than the stored one is kept as an event
 * dropped as `superseded`; a report of the state already stored is a heartbeat (`unchanged`):
 * it refreshes last-seen and wakes nobody. A report that matches what the agent's own action
 * led it to expect (fleet/instances/expectations.ts) is stored and kept in the history but wakes nobody
 * either (`expected`): the agent does not hear the echo of its own action.
 * A change that carries telemetry writes its sample in the same batch (fleet/instances/telemetry.ts), so a
 * heartbeat with utilisation costs no extra round trip; a stop by a higher bid says so in the
 * event's payload (`reason: "outbid"`), for the agent and the rules policy.
 * An instance's own report (recordInstanceReport) is admitted in the same batch: its agent's
 * labelPrefix filter and cap on webhook-only instances (a row first made by a webhook) are
 * conditions of the event insert, so a refused report writes nothing and costs no extra read; the
 * instance's row counts the reports it stored this minute, for the flood bound (report-flood.ts).
 */
import type { FleetDeps } from "../deps.ts";
import { debounceWindow } from "../../pipeline/index.ts";
import { bind } from "../../db/prepared.ts";
import {
  commitIngest,
  publishAfterIngest,
  scheduleIfPending,
  type Ingested,
  type MovedRun,
  type StoredEvent,
} from "../../pipeline/index.ts";
import { expectationsKeptBy, expectationsMatchedBy } from "./expectations.ts";
import { DETAIL_KEYS, instanceStatePrepared, stateSet, type DetailKey } from "./instance-state-statements.ts";
import type { FleetInstance, InstanceState, StopReason } from "../providers/provider.ts";
import { noteStoredReports, reportMinute } from "./report-flood.ts";
import { hasTelemetry, telemetryStatements, type TelemetryReading, type TelemetrySource } from "./telemetry.ts";

export interface StateChange {
  agentId: string;
  instanceId: string;
  state: InstanceState;
  /** When the change happened (ms epoch); defaults to now. */
  at?: number;
  message?: string | null;
  source: "webhook" | "reconcile" | "heartbeat" | "action";
  dedupKey: string;
  /** Provider details to keep on the instance row (reconciliation knows them; webhooks do not). */
  details?: Partial<Pick<FleetInstance, DetailKey>>;
  /** What the report says about work, and who measured it: written as a sample in the same batch. */
  telemetry?: TelemetryReading & { source: TelemetrySource };
  /** Why the instance stopped, when known: carried in the event's payload. */
  reason?: StopReason | null;
}

export interface RecordedChange extends Ingested {
  /** pending (a run is requested) | superseded | unchanged | expected (the echo of an action) */
  outcome: "pending" | "superseded" | "unchanged" | "expected";
}

/**
 * What a webhook report must pass to be stored (instance-state-statements.ts checks it in the
 * batch): the agent's labelPrefix filter (null: none) and its cap on webhook-only instances.
 */
export interface ReportAdmission {
  labelPrefix: string | null;
  webhookOnlyMax: number;
  /** The provider lists this id (asked only past the cap): stored as a provider instance, not webhook-only. */
  listed?: boolean;
}

/** One statement set per change: the bound values of instance-state-statements.ts. */
function changeValues(deps: FleetDeps, change: StateChange, admission: ReportAdmission | null) {
  const now = deps.clock.now();
  const at = change.at ?? now;
  const message = change.message ?? null;
  const details: Record<string, unknown> = {};
  for (const key of DETAIL_KEYS) {
    const given = change.details !== undefined && key in change.details;
    const value = given ? (change.details![key] ?? null) : null;
    details[key] = typeof value === "boolean" ? Number(value) : value;
    details[`${key}Given`] = given ? 1 : 0;
  }
  return {
    agentId: change.agentId,
    instanceId: change.instanceId,
    dedupKey: change.dedupKey,
    source: change.source,
    state: change.state,
    now,
    minute: reportMinute(now),
    at,
    message,
    payload: {
      instanceId: change.instanceId,
      state: change.state,
      at: new Date(at).toISOString(),
      message,
      ...(change.reason ? { reason: change.reason } : {}),
    },
    // Only the instance's own reports (webhooks) prove it is alive.
    webhook: change.source === "webhook" ? 1 : 0,
    matched: stateSet(expectationsMatchedBy(change.state)),
    kept: stateSet(expectationsKeptBy(change.state)),
    target: now + debounceWindow(deps.config, 1),
    gate: admission ? 1 : 0,
    labelPrefix: admission?.labelPrefix ?? null,
    webhookOnlyMax: admission?.listed ? Number.MAX_SAFE_INTEGER : (admission?.webhookOnlyMax ?? 0),
    webhookOnlyNew: change.source === "webhook" && !admission?.listed ? 1 : 0,
    ...details,
  };
}

/** The sample's statements when the change carries telemetry, written only by the batch that stored the event. */
function telemetryOf(deps: FleetDeps, change: StateChange, at: number, now: number) {
  if (!hasTelemetry(change.telemetry)) return {};
  const { source, ...reading } = change.telemetry;
  return telemetryStatements(deps, change.agentId, source, [{ instanceId: change.instanceId, at, ...reading }], change.dedupKey, now);
}

export async function recordInstanceState(deps: FleetDeps, change: StateChange): Promise<RecordedChange> {
  const recorded = await recordAdmitted(deps, change, null);
  if (!recorded) throw new Error(`state change of instance ${change.instanceId} was not stored`);
  return recorded;
}

/**
 * An instance's own report (a webhook), stored only if it passes `admission`; null when refused,
 * and then the batch wrote nothing (no event, row, history, sample or run request).
 */
export async function recordInstanceReport(
  deps: FleetDeps,
  change: StateChange,
  admission: ReportAdmission,
): Promise<RecordedChange | null> {
  return recordAdmitted(deps, change, admission);
}

async function recordAdmitted(deps: FleetDeps, change: StateChange, admission: ReportAdmission | null): Promise<RecordedChange | null> {
  const prepared = instanceStatePrepared(deps.db);
  const values = changeValues(deps, change, admission);
  // In order: the event (dropped with its reason when it is no news), its stored row and whether
  // this batch stored it, the history row and the instance (only by the batch that stored the
  // event), the run request (only while the event is pending).
  const results = await commitIngest(deps, {
    insertEvent: bind(prepared.insertEvent, values),
    stored: bind(prepared.stored, values),
    appendHistory: bind(prepared.appendHistory, values),
    upsertInstance: bind(prepared.upsertInstance, values),
    ...telemetryOf(deps, change, values.at, values.now),
    scheduleRun: scheduleIfPending(deps, values),
  });
  const counted = results.upsertInstance[0];
  if (change.source === "webhook" && counted?.reportsMinute != null) {
    noteStoredReports(deps, change.agentId, change.instanceId, counted.reportsMinute, counted.reportsInMinute);
  }
  const moved: MovedRun | undefined = results.scheduleRun[0];
  await publishAfterIngest(deps, change.agentId, moved);
  const row: (StoredEvent & { status: string; dropReason: string | null }) | undefined = results.stored[0];
  if (!row) return null;
  const outcome = row.status === "dropped" ? (row.dropReason as "superseded" | "unchanged" | "expected") : "pending";
  return { eventId: row.id, duplicate: row.inserted === 0, outcome };
}
