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
import type { FleetDeps } from "../deps.ts";
import { events, instanceEvents, instances } from "../../schema/index.ts";
import { ingestWrites, type PipelineDeps } from "../../pipeline/index.ts";
import { combineWrites, defineTickCheck } from "../../pipeline/index.ts";

/** States in which an instance that reports by webhook keeps reporting. */
export const HEARTBEAT_STATES = ["running", "loading", "rebooting"] as const;

type Silent = typeof instances.$inferSelect;

/** The tick's heartbeat check: silent instances are read in the snapshot, flagged in the write batch. */
export const checkHeartbeats = defineTickCheck({
  name: "checkHeartbeats",
  reads(deps: FleetDeps, agentId: string, now: number) {
    const timeoutMs = sql`coalesce(${instances.heartbeatS} * 1000, ${deps.config.heartbeatTimeoutMs})`;
    return {
      silent: deps.db
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
        ),
    };
  },
  decide(deps, agentId, rows, tick) {
    const silent = rows.silent.filter((row) => !tick.reconciled.has(row.id));
    const flags = combineWrites(silent.map((row) => flagWrites(deps, agentId, row, tick.now)));
    return {
      statements: flags.statements,
      async after(results) {
        await flags.after(results);
        const flagged = silent.map((row) => row.id);
        if (flagged.length) deps.log.info("instances missed their heartbeat", { agentId, instances: flagged });
        return flagged;
      },
    };
  },
});

/** One silent instance: its inbox event, its flag, and its history row keyed by that event. */
function flagWrites(deps: PipelineDeps, agentId: string, row: Silent, now: number) {
  const { db } = deps;
  const silentForS = Math.round((now - row.lastSeenAt) / 1000);
  const message = `no report for ${silentForS}s (last seen ${new Date(row.lastSeenAt).toISOString()})`;
  // Keyed by the last report: a crash before the flag is set makes the retry a duplicate.
  const dedupKey = `heartbeat:${row.id}:${row.lastSeenAt}`;
  const event = {
    agentId,
    source: "heartbeat" as const,
    priority: 1 as const,
    dedupKey,
    payload: {
      instanceId: row.id,
      state: row.state,
      heartbeatMissed: true,
      lastSeenAt: new Date(row.lastSeenAt).toISOString(),
      silentForS,
    },
  };
  return ingestWrites(deps, event, [
    db
      .update(instances)
      .set({ heartbeatFlaggedAt: now, updatedAt: now })
      .where(and(eq(instances.agentId, agentId), eq(instances.id, row.id), eq(instances.lastSeenAt, row.lastSeenAt))),
    db.run(sql`insert into ${instanceEvents} (agent_id, instance_id, from_state, to_state, source, message, at, event_id, created_at)
      select ${agentId}, ${row.id}, ${row.state}, ${row.state}, 'heartbeat', ${message}, ${now}, e.id, ${now}
      from ${events} e where e.agent_id = ${agentId} and e.dedup_key = ${dedupKey}
        and not exists (select 1 from ${instanceEvents} ie where ie.agent_id = ${agentId} and ie.event_id = e.id)`),
  ]);
}
