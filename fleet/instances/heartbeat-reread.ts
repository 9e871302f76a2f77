/**
 * A missed heartbeat acted on (issue 34, item 4): an instance that reports by webhook and has been
 * silent past its heartbeat timeout (the same silence checkHeartbeats raises as an event) is read
 * again from the provider, after the tick's write batch; when the provider says it is running, the
 * container is alive to the provider but not reaching fleetwarden (a hung process, a cut network,
 * a dead reporter), and a human is told once that it is unreachable. The agent's run still gets
 * the heartbeat event; this notice does not wait for it, and the escalation check
 * (heartbeat-escalation.ts) sees the notice and tells nobody again.
 *
 * What bounds it:
 * - one re-read per silence episode: the once-mark `unreachable:<instance>:<lastSeenAt>` is written
 *   whatever the provider answers (with the notice when it runs, alone otherwise, and after a
 *   failed read too), and the snapshot only selects instances without it; a report starts a new
 *   episode (a new lastSeenAt);
 * - at most REREADS_PER_TICK (10) provider reads per tick (the snapshot's `limit`), longest silent first.
 */
import { and, asc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instances } from "../../schema/index.ts";
import { defineTickCheck, writesNothing } from "../../pipeline/index.ts";
import { markStatement, onceKey, onceKeySql, onceMarked } from "../once-notices.ts";
import { tellOnce } from "../tell-once.ts";
import { HEARTBEAT_STATES } from "./heartbeat.ts";

/** The per-tick bound on provider re-reads of silent instances. */
export const REREADS_PER_TICK = 10;

export interface RereadReport {
  /** Told unreachable: the provider says they run. */
  unreachable: string[];
  /** Re-read, and the provider says otherwise (or the read failed): marked, nobody told. */
  marked: string[];
}

export const rereadSilentInstances = defineTickCheck({
  name: "rereadSilentInstances",
  reads(deps: FleetDeps, agentId: string, now: number) {
    const timeoutMs = sql`coalesce(${instances.heartbeatS} * 1000, ${deps.config.heartbeatTimeoutMs})`;
    return {
      silent: deps.db
        .select({ id: instances.id, state: instances.state, lastSeenAt: instances.lastSeenAt })
        .from(instances)
        .where(
          and(
            eq(instances.agentId, agentId),
            eq(instances.reportsByWebhook, true),
            eq(instances.webhookOnly, false),
            inArray(instances.state, [...HEARTBEAT_STATES]),
            isNull(instances.goneAt),
            lt(instances.lastSeenAt, sql`${now} - ${timeoutMs}`),
            sql`not ${onceMarked(agentId, onceKeySql("unreachable", sql`${instances.id}`, sql`${instances.lastSeenAt}`))}`,
          ),
        )
        .orderBy(asc(instances.lastSeenAt), asc(instances.id))
        .limit(REREADS_PER_TICK),
    };
  },
  decide(deps, agentId, rows, tick) {
    // Reconciliation recorded these in this tick; the rows here predate it, so judge them next tick.
    const silent = rows.silent.filter((row) => !tick.reconciled.has(row.id));
    if (!silent.length) return writesNothing<RereadReport>({ unreachable: [], marked: [] });
    return {
      statements: [],
      async after(): Promise<RereadReport> {
        const report: RereadReport = { unreachable: [], marked: [] };
        for (const row of silent) {
          const key = onceKey("unreachable", row.id, row.lastSeenAt);
          const providerState = await readState(deps, agentId, row.id);
          if (providerState === "running") {
            const silentForS = Math.round((tick.now - row.lastSeenAt) / 1000);
            await tellOnce(deps, agentId, {
              key,
              title: `Instance ${row.id} is unreachable`,
              body: `${row.id} has sent no report for ${silentForS}s (last seen ${new Date(row.lastSeenAt).toISOString()}), but the provider says it is running: the container or its network may be hung. It still costs money while running.`,
              severity: "warning",
              instanceId: row.id,
            });
            report.unreachable.push(row.id);
          } else {
            await markStatement(deps, agentId, key, deps.clock.now());
            report.marked.push(row.id);
          }
        }
        if (report.unreachable.length) deps.log.info("silent instances the provider says run", { agentId, ...report });
        return report;
      },
    };
  },
});

/** The provider's state of one instance; null when it does not list it or the read failed (logged). */
async function readState(deps: FleetDeps, agentId: string, instanceId: string): Promise<string | null> {
  try {
    return (await deps.provider.get(instanceId))?.state ?? null;
  } catch (err) {
    deps.log.error("could not re-read a silent instance from the provider", { agentId, instanceId, error: String(err) });
    return null;
  }
}
