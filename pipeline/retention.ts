/**
 * Retention: records that matter only for a while are pruned by the cron tick — events dropped
 * at ingest (superseded reports, heartbeat-only reports, which a chatty fleet sends all day) and
 * the local scheduler's finished deliveries, instance telemetry samples (fleet/instances/telemetry.ts
 * writes one per instance per report; the idle rule and the sparkline read a day), and LLM call
 * transcripts (llm_calls) and their replays older than LLM_TRANSCRIPT_DAYS; and (issue 26, so no
 * list grows with all time) consumed events older than RETENTION_MS (the run that consumed one
 * keeps its triggers, copied at the claim) and instance state history older than
 * HISTORY_RETENTION_MS. Pending work is never touched. Each tick deletes at most PER_TICK rows of each, in
 * slices of SLICE with a turn of the event loop between them, so a large backlog never holds the
 * database (and, on Node, the request handlers) for long.
 */
import { sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { DAY_MS } from "../runtime/time.ts";
import { yieldToEventLoop } from "../runtime/yield.ts";
import { deliveries, events, instanceEvents, instanceTelemetry, llmCalls, replays } from "../schema/index.ts";

export const RETENTION_MS = 7 * DAY_MS;
/** An instance's state history is kept this long (its current state is on the instance row). */
export const HISTORY_RETENTION_MS = 30 * DAY_MS;

export interface Pruned {
  events: number;
  deliveries: number;
  telemetry: number;
  llmCalls: number;
  consumedEvents: number;
  history: number;
  replays: number;
}
const PER_TICK = 1000;
export const SLICE = 100;

export async function pruneOldRecords(deps: PipelineDeps): Promise<Pruned> {
  const now = deps.clock.now();
  const before = now - RETENTION_MS;
  const transcriptsBefore = now - deps.config.llmTranscriptDays * DAY_MS;
  const historyBefore = now - HISTORY_RETENTION_MS;
  const pruned: Pruned = { events: 0, deliveries: 0, telemetry: 0, llmCalls: 0, consumedEvents: 0, history: 0, replays: 0 };
  const keys = Object.keys(pruned) as (keyof Pruned)[];
  // Bounded: PER_TICK / SLICE slices at most, fewer once a slice finds less than it may delete.
  for (let slice = 0; slice < PER_TICK / SLICE; slice++) {
    const results = await deps.db.batch([
      // Literal statuses, not bound values: SQLite uses a partial index (events_dropped,
      // events_consumed, deliveries_finished) only where the statement's WHERE proves the index's.
      deps.db
        .delete(events)
        .where(
          sql`${events.id} in (select ${events.id} from ${events} where ${events.status} = 'dropped' and ${events.createdAt} < ${before} limit ${SLICE})`,
        ),
      deps.db
        .delete(deliveries)
        .where(
          sql`${deliveries.id} in (select ${deliveries.id} from ${deliveries} where ${deliveries.status} in ('delivered', 'failed') and ${deliveries.createdAt} < ${before} limit ${SLICE})`,
        ),
      deps.db
        .delete(instanceTelemetry)
        .where(
          sql`${instanceTelemetry.id} in (select ${instanceTelemetry.id} from ${instanceTelemetry} where ${instanceTelemetry.at} < ${before} limit ${SLICE})`,
        ),
      deps.db
        .delete(llmCalls)
        .where(
          sql`${llmCalls.id} in (select ${llmCalls.id} from ${llmCalls} where ${llmCalls.createdAt} < ${transcriptsBefore} limit ${SLICE})`,
        ),
      deps.db
        .delete(events)
        .where(
          sql`${events.id} in (select ${events.id} from ${events} where ${events.status} = 'consumed' and ${events.createdAt} < ${before} limit ${SLICE})`,
        ),
      deps.db
        .delete(instanceEvents)
        .where(
          sql`${instanceEvents.id} in (select ${instanceEvents.id} from ${instanceEvents} where ${instanceEvents.createdAt} < ${historyBefore} limit ${SLICE})`,
        ),
      deps.db
        .delete(replays)
        .where(
          sql`${replays.id} in (select ${replays.id} from ${replays} where ${replays.createdAt} < ${transcriptsBefore} limit ${SLICE})`,
        ),
    ]);
    results.forEach((r, i) => (pruned[keys[i]!] += r.rowsAffected));
    if (results.every((r) => r.rowsAffected < SLICE)) break;
    await yieldToEventLoop();
  }
  return pruned;
}
