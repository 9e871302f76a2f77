/**
 * A cron check: channel deliveries whose scheduler publish was lost (the scheduler was down when
 * the alert was raised) are never attempted. A pending delivery with no attempt after
 * STALLED_AFTER_MS is published again, under a fresh dedup key per interval, so an alert is never
 * silently dropped. deliverNotification is idempotent, so a late original does no harm.
 */
import { sql } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { MINUTE_MS } from "../runtime/time.ts";
import { notificationDeliveries, notifications } from "../schema/index.ts";
import { defineTickCheck } from "../pipeline/index.ts";

export const STALLED_AFTER_MS = 5 * MINUTE_MS;

/** The tick's check: stalled deliveries read in the snapshot, published again after the write batch. */
export const repairStalledDeliveries = defineTickCheck({
  name: "republishStalledDeliveries",
  reads(deps: PipelineDeps, agentId: string, now: number) {
    return {
      stalled: deps.db.all<{ id: number }>(sql`select d.id from ${notificationDeliveries} d
        join ${notifications} n on n.id = d.notification_id
        where n.agent_id = ${agentId} and d.status = 'pending' and d.attempts = 0 and n.created_at <= ${now - STALLED_AFTER_MS}
        limit 100`),
    };
  },
  decide(deps, agentId, rows, tick) {
    const bucket = Math.floor(tick.now / STALLED_AFTER_MS);
    return {
      statements: [],
      async after() {
        for (const { id } of rows.stalled) {
          await deps.scheduler.publish({ dedupKey: `notify:${id}:repair:${bucket}`, notBefore: tick.now, body: { type: "notify", agentId, deliveryId: id } });
        }
        return rows.stalled.length;
      },
    };
  },
});
