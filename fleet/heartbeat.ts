/**
 * The heartbeat check (a cron check): an instance that reports by webhook and has been silent
 * longer than its expected heartbeat (its own `heartbeatS`, else HEARTBEAT_TIMEOUT_S) becomes one
 * inbox event (source "heartbeat", priority 1) and is flagged, so it is not raised again until
 * it reports once more (a webhook clears the flag). Only instances that have ever reported by
 * webhook are expected to heartbeat, and only while their container should be up (running,
 * loading, rebooting): a stopped or exited instance is silent by nature, and one the provider
 * no longer lists is gone, not late.
 */
import { and, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { instanceEvents, instances } from "../schema/index.ts";
import { ingestEvent } from "../triggers/ingest.ts";
import type { TickCheck } from "../triggers/cron-tick.ts";

/** States in which an instance that reports by webhook keeps reporting. */
export const HEARTBEAT_STATES = ["running", "loading", "rebooting"] as const;

export async function flagSilentInstances(deps: Deps, agentId: string): Promise<string[]> {
  const { db, clock, config } = deps;
  const now = clock.now();
  const timeoutMs = sql`coalesce(${instances.heartbeatS} * 1000, ${config.heartbeatTimeoutMs})`;
  const silent = await db
    .select()
    .from(instances)
    .where(
      and(
        eq(instances.agentId, agentId),
        eq(instances.reportsByWebhook, true),
        inArray(instances.state, [...HEARTBEAT_STATES]),
        isNull(instances.goneAt),
        isNull(instances.heartbeatFlaggedAt),
        lt(instances.lastSeenAt, sql`${now} - ${timeoutMs}`),
      ),
    );
  const flagged: string[] = [];
  for (const row of silent) {
    const silentForS = Math.round((now - row.lastSeenAt) / 1000);
    const message = `no report for ${silentForS}s (last seen ${new Date(row.lastSeenAt).toISOString()})`;
    // Keyed by the last report: a crash before the flag is set makes the retry a duplicate.
    const { eventId } = await ingestEvent(deps, {
      agentId,
      source: "heartbeat",
      priority: 1,
      dedupKey: `heartbeat:${row.id}:${row.lastSeenAt}`,
      payload: { instanceId: row.id, state: row.state, heartbeatMissed: true, lastSeenAt: new Date(row.lastSeenAt).toISOString(), silentForS },
    });
    await db.batch([
      db
        .update(instances)
        .set({ heartbeatFlaggedAt: now, updatedAt: now })
        .where(and(eq(instances.agentId, agentId), eq(instances.id, row.id), eq(instances.lastSeenAt, row.lastSeenAt))),
      db.run(sql`insert into ${instanceEvents} (agent_id, instance_id, from_state, to_state, source, message, at, event_id, created_at)
        select ${agentId}, ${row.id}, ${row.state}, ${row.state}, 'heartbeat', ${message}, ${now}, ${eventId}, ${now}
        where not exists (select 1 from ${instanceEvents} where agent_id = ${agentId} and event_id = ${eventId})`),
    ]);
    flagged.push(row.id);
  }
  return flagged;
}

export const checkHeartbeats: TickCheck = async function checkHeartbeats(deps, agentId) {
  const flagged = await flagSilentInstances(deps, agentId);
  if (flagged.length) deps.log.info("instances missed their heartbeat", { agentId, instances: flagged });
};
