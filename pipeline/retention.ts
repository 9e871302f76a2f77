/**
 * Retention: records that matter only for a while are pruned by the cron tick — events dropped
 * at ingest (superseded reports, heartbeat-only reports, which a chatty fleet sends all day) and
 * the local scheduler's finished deliveries, instance telemetry samples (fleet/telemetry.ts
 * writes one per instance per report; the idle rule and the sparkline read a day), and LLM call
 * transcripts (llm_calls) older than LLM_TRANSCRIPT_DAYS. Pending work is never touched, and
 * consumed events stay with the runs that consumed them. Each tick deletes at most PER_TICK rows of each, in
 * slices of SLICE with a turn of the event loop between them, so a large backlog never holds the
 * database (and, on Node, the request handlers) for long.
 */
import { sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { DAY_MS } from "../runtime/time.ts";
import { yieldToEventLoop } from "../runtime/yield.ts";
import { deliveries, events, instanceTelemetry, llmCalls } from "../schema/index.ts";

export const RETENTION_MS = 7 * DAY_MS;
const PER_TICK = 1000;
export const SLICE = 100;

export async function pruneOldRecords(deps: PipelineDeps): Promise<{ events: number; deliveries: number; telemetry: number; llmCalls: number }> {
  const before = deps.clock.now() - RETENTION_MS;
  const transcriptsBefore = deps.clock.now() - deps.config.llmTranscriptDays * DAY_MS;
  const pruned = { events: 0, deliveries: 0, telemetry: 0, llmCalls: 0 };
  // Bounded: PER_TICK / SLICE slices at most, fewer once a slice finds less than it may delete.
  for (let slice = 0; slice < PER_TICK / SLICE; slice++) {
    const [droppedEvents, finishedDeliveries, oldSamples, oldCalls] = await deps.db.batch([
      // Literal statuses, not bound values: SQLite uses a partial index (events_dropped,
      // deliveries_finished) only where the statement's WHERE proves the index's.
      deps.db.delete(events).where(
        sql`${events.id} in (select ${events.id} from ${events} where ${events.status} = 'dropped' and ${events.createdAt} < ${before} limit ${SLICE})`,
      ),
      deps.db.delete(deliveries).where(
        sql`${deliveries.id} in (select ${deliveries.id} from ${deliveries} where ${deliveries.status} in ('delivered', 'failed') and ${deliveries.createdAt} < ${before} limit ${SLICE})`,
      ),
      deps.db
        .delete(instanceTelemetry)
        .where(sql`${instanceTelemetry.id} in (select ${instanceTelemetry.id} from ${instanceTelemetry} where ${instanceTelemetry.at} < ${before} limit ${SLICE})`),
      deps.db.delete(llmCalls).where(
        sql`${llmCalls.id} in (select ${llmCalls.id} from ${llmCalls} where ${llmCalls.createdAt} < ${transcriptsBefore} limit ${SLICE})`,
      ),
    ]);
    pruned.events += droppedEvents.rowsAffected;
    pruned.deliveries += finishedDeliveries.rowsAffected;
    pruned.telemetry += oldSamples.rowsAffected;
    pruned.llmCalls += oldCalls.rowsAffected;
    if (droppedEvents.rowsAffected < SLICE && finishedDeliveries.rowsAffected < SLICE && oldSamples.rowsAffected < SLICE && oldCalls.rowsAffected < SLICE) break;
    await yieldToEventLoop();
  }
  return pruned;
}
