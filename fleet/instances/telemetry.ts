/**
 * The one write of a telemetry sample (GPU utilisation, disk use) from any source: a webhook
 * report, the provider's list at reconciliation (Vast.ai or the simulator), a simulated report.
 * It is two statements that join the caller's batch, never a round trip of their own, however
 * many instances the samples are about: the instance rows' latest figures and `instance_telemetry` rows (the idle rule's window and the
 * dashboard's sparkline; pruned after 7 days by pipeline/retention.ts).
 *
 * Bounded: the instance row takes every report's figures, but a sample row is written at most once
 * per SAMPLE_EVERY_MS per instance, however chatty its webhooks or frequent reconciliation, so a
 * fleet writes at most 288 rows per instance a day and retention (1,000 rows a tick, 1.44 M a day)
 * keeps up with fleets of thousands.
 *
 * `idleSince` is kept here and nowhere else: a utilisation sample below
 * `config.economics.idleGpuUtilPct` on a running instance keeps it (or sets it to the sample's
 * time), any other utilisation sample clears it, and a sample older than the stored one changes
 * nothing. A state change away from running clears it too (instance-state-statements.ts).
 * Whether an idle mark is still believable (fresh telemetry) is the reader's judgement.
 *
 * The progress counter (webhook only, issue 34) is kept here too: `progress`/`progressAt` take a
 * reading not older than the stored one, and `progressMovedAt` is set to the reading's time when
 * the counter is first seen or differs from the stored one. A lower value counts as movement: it
 * is a restarted job counting again from zero, a new episode, not a hang (fleet/instances/stall.ts).
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { bind, preparedPerDb } from "../../db/prepared.ts";
import { insertWhere } from "../../db/insert-where.ts";
import type { PipelineDeps } from "../../pipeline/index.ts";
import { events, instances, instanceTelemetry } from "../../schema/index.ts";
import type { ProviderKind } from "../providers/provider.ts";

export type TelemetrySource = "webhook" | ProviderKind;

/** What one report says about work: either figure may be missing. */
export interface TelemetryReading {
  gpuUtil?: number | null;
  diskUsedPct?: number | null;
  /** The instance's own progress counter (webhook only). */
  progress?: number | null;
}

/** The least time between two sample rows of one instance. */
export const SAMPLE_EVERY_MS = 5 * 60_000;

const given = (value: number | null | undefined): value is number => typeof value === "number" && Number.isFinite(value);

/** True when the reading carries a figure worth a sample. */
export function hasTelemetry(reading: TelemetryReading | undefined): reading is TelemetryReading {
  return reading !== undefined && (given(reading.gpuUtil) || given(reading.diskUsedPct) || given(reading.progress));
}

const p = (name: string) => sql.placeholder(name);

/**
 * The samples of one call as rows (`s`): a JSON array bound as one value, so a whole fleet's
 * samples are one statement pair however many instances it has. `limit -1` keeps SQLite from
 * flattening the subquery: materialised, `s` is the outer loop and each instance row is one
 * primary-key lookup. Flattened, the planner looped over the agent's instances and scanned the
 * whole array for each, n² (at 1,000 instances one tick's update held the event loop 380 ms).
 */
const samples = sql`(select json_extract(value, '$.i') as instance_id, json_extract(value, '$.u') as gpu_util,
  json_extract(value, '$.d') as disk_used_pct, json_extract(value, '$.p') as progress, json_extract(value, '$.a') as at from json_each(${p("samples")}) limit -1) as s`;

const telemetryPrepared = preparedPerDb((db: Db) => {
  const agentId = p("agentId");
  // Only the batch that stored its event writes (a repeated webhook-id writes no second sample);
  // samples without an event (reconciliation's) pass a null key.
  const guard = sql`(${p("eventKey")} is null or exists (select 1 from ${events} where ${events.agentId} = ${agentId}
    and ${events.dedupKey} = ${p("eventKey")} and ${events.createdAt} = ${p("now")}))`;
  const newer = sql`(${instances.gpuUtilAt} is null or ${instances.gpuUtilAt} <= s.at)`;
  const freshUtil = sql`(s.gpu_util is not null and ${newer})`;
  const freshProgress = sql`(s.progress is not null and (${instances.progressAt} is null or ${instances.progressAt} <= s.at))`;
  return {
    updateInstances: db
      .update(instances)
      .set({
        gpuUtil: sql`case when ${freshUtil} then s.gpu_util else ${instances.gpuUtil} end`,
        gpuUtilAt: sql`case when ${freshUtil} then s.at else ${instances.gpuUtilAt} end`,
        diskUsedPct: sql`case when s.disk_used_pct is not null and ${newer} then s.disk_used_pct else ${instances.diskUsedPct} end`,
        telemetrySource: sql`case when ${newer} then ${p("source")} else ${instances.telemetrySource} end`,
        idleSince: sql`case when not ${freshUtil} then ${instances.idleSince}
          when ${instances.state} = 'running' and s.gpu_util < ${p("idleBelow")} then coalesce(${instances.idleSince}, s.at)
          else null end`,
        progress: sql`case when ${freshProgress} then s.progress else ${instances.progress} end`,
        progressAt: sql`case when ${freshProgress} then s.at else ${instances.progressAt} end`,
        progressMovedAt: sql`case when ${freshProgress} and (${instances.progress} is null or ${instances.progress} <> s.progress)
          then s.at else ${instances.progressMovedAt} end`,
      })
      .from(samples)
      .where(and(eq(instances.agentId, agentId), sql`${instances.id} = s.instance_id`, guard))
      .prepare(),
    insertSamples: insertWhere(
      db,
      instanceTelemetry,
      {
        agentId,
        instanceId: sql`s.instance_id`,
        gpuUtil: sql`s.gpu_util`,
        diskUsedPct: sql`s.disk_used_pct`,
        progress: sql`s.progress`,
        source: p("source"),
        at: sql`s.at`,
      },
      sql`${guard} and not exists (select 1 from ${instanceTelemetry} t where t.agent_id = ${agentId} and t.instance_id = s.instance_id
        and t.at > s.at - ${SAMPLE_EVERY_MS})`,
      samples,
    ).prepare(),
  };
});

/**
 * The samples' two statements, for the caller's batch (after the writes that create their
 * instance rows): the instance rows' latest figures and idle mark, then the sample rows.
 * `eventKey`: the dedup key of the event stored in the same batch, so a repeated report writes
 * nothing; null when the samples have no event. `now`: the event's own creation time when there is
 * one (the sample is written only where the event's `createdAt` equals it, so a second clock
 * reading a millisecond later would drop the sample).
 */
export function telemetryStatements(
  deps: Pick<PipelineDeps, "db" | "config" | "clock">,
  agentId: string,
  source: TelemetrySource,
  readings: readonly (TelemetryReading & { instanceId: string; at: number })[],
  eventKey: string | null,
  now: number = deps.clock.now(),
) {
  const prepared = telemetryPrepared(deps.db);
  const rows = readings.map((r) => ({
    i: r.instanceId,
    u: given(r.gpuUtil) ? r.gpuUtil : null,
    d: given(r.diskUsedPct) ? r.diskUsedPct : null,
    p: given(r.progress) ? r.progress : null,
    a: r.at,
  }));
  const values = {
    agentId,
    source,
    samples: JSON.stringify(rows),
    now,
    eventKey,
    idleBelow: deps.config.economics.idleGpuUtilPct,
  };
  return { telemetryInstances: bind(prepared.updateInstances, values), telemetrySamples: bind(prepared.insertSamples, values) };
}
