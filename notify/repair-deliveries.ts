/**
 * A cron check: channel deliveries nobody will attempt again are attempted again. Two ways a
 * delivery is left so: its scheduler publish was lost (the process stopped between storing the
 * alert and publishing: pending, never attempted), or it was sent directly because the scheduler
 * refused the publish and that one attempt failed retryably (pending, attempted, and no scheduler
 * retry coming). A pending delivery is due for repair once STALLED_AFTER_MS × (attempts + 1) has
 * passed since its alert, so each repair waits longer than the last; it is published again under
 * a fresh dedup key per interval, or sent directly while the scheduler still refuses. The bound
 * is deliverNotification's: it counts every attempt and marks the row failed at its last one, and
 * only pending rows are repaired. deliverNotification is idempotent, so a late original does no harm.
 */
import { sql } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { MINUTE_MS } from "../runtime/time.ts";
import { notificationDeliveries, notifications } from "../schema/index.ts";
import { defineTickCheck } from "../pipeline/index.ts";
import { deliverNotification } from "./deliver-notification.ts";

export const STALLED_AFTER_MS = 5 * MINUTE_MS;

/** The tick's check: stalled deliveries read in the snapshot, published again after the write batch. */
export const repairStalledDeliveries = defineTickCheck({
  name: "republishStalledDeliveries",
  reads(deps: PipelineDeps, agentId: string, now: number) {
    return {
      stalled: deps.db.all<{ id: number }>(sql`select d.id from ${notificationDeliveries} d
        join ${notifications} n on n.id = d.notification_id
        where n.agent_id = ${agentId} and d.status = 'pending' and n.created_at <= ${now} - ${STALLED_AFTER_MS} * (d.attempts + 1)
        limit 100`),
    };
  },
  decide(deps, agentId, rows, tick) {
    const bucket = Math.floor(tick.now / STALLED_AFTER_MS);
    return {
      statements: [],
      async after() {
        for (const { id } of rows.stalled) {
          try {
            await deps.scheduler.publish({
              dedupKey: `notify:${id}:repair:${bucket}`,
              notBefore: tick.now,
              body: { type: "notify", agentId, deliveryId: id },
            });
          } catch (err) {
            deps.log.error("re-publishing a stalled notification delivery failed; sending it now", { deliveryId: id, error: String(err) });
            await deliverNotification(deps, id).catch((sendError: unknown) =>
              deps.log.error("sending a stalled notification delivery failed", { deliveryId: id, error: String(sendError) }),
            );
          }
        }
        return rows.stalled.length;
      },
    };
  },
});
