/**
 * Retention: records that matter only for a while are pruned by the cron tick — events dropped
 * at ingest (superseded reports, heartbeat-only reports, which a chatty fleet sends all day) and
 * the local scheduler's finished deliveries. Pending work is never touched, and consumed events
 * stay with the runs that consumed them. Each tick deletes a bounded number of rows.
 */
import { sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { DAY_MS } from "../runtime/time.ts";
import { deliveries, events } from "../schema/index.ts";

export const RETENTION_MS = 7 * DAY_MS;
const PER_TICK = 1000;

export async function pruneOldRecords(deps: Deps): Promise<{ events: number; deliveries: number }> {
  const before = deps.clock.now() - RETENTION_MS;
  const [droppedEvents, finishedDeliveries] = await deps.db.batch([
    deps.db.run(sql`delete from ${events} where id in (
      select id from ${events} where status = 'dropped' and created_at < ${before} limit ${PER_TICK})`),
    deps.db.run(sql`delete from ${deliveries} where id in (
      select id from ${deliveries} where status in ('delivered', 'failed') and created_at < ${before} limit ${PER_TICK})`),
  ]);
  return { events: droppedEvents.rowsAffected, deliveries: finishedDeliveries.rowsAffected };
}
