/**
 * Escalation of a missed heartbeat (a cron check): once the run that heard about a silent
 * instance has finished (its heartbeat event is consumed), if the instance is still silent and
 * the agent neither acted on it (an action on that instance) nor told a human about it (a
 * notification about that instance) since the event, a human is told, once per silence: the
 * notification's key names the last report, and a key already used is never used again.
 */
import { sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions, events, instances, notifications } from "../../schema/index.ts";
import { notificationStatements } from "../../notify/notify-human.ts";
import { combineWrites, defineTickCheck } from "../../pipeline/index.ts";
import { HEARTBEAT_STATES } from "./heartbeat.ts";

/** Heartbeat events older than this are not looked at again. */
const LOOKBACK_MS = 24 * 3_600_000;

interface Unanswered {
  instanceId: string;
  state: string;
  lastSeenAt: number;
  dedupKey: string;
}

/**
 * The tick's escalation check. One snapshot statement finds the heartbeat events whose run has
 * finished, whose instance is still silent since the same last report (the event's dedup key
 * names it: `heartbeat:<instance>:<lastSeenAt>`), and that nobody answered: no action on the
 * instance and no notification about it since the event, and no notification under the key.
 */
export const checkMissedHeartbeats = defineTickCheck({
  name: "checkMissedHeartbeats",
  reads(deps: FleetDeps, agentId: string, now: number) {
    return {
      unanswered: deps.db.all<Unanswered>(sql`
        select i.id as instanceId, i.state as state, i.last_seen_at as lastSeenAt, e.dedup_key as dedupKey
        from ${events} e join ${instances} i
          on i.agent_id = e.agent_id and e.dedup_key = 'heartbeat:' || i.id || ':' || i.last_seen_at
        where e.agent_id = ${agentId} and e.source = 'heartbeat' and e.status = 'consumed' and e.created_at > ${now - LOOKBACK_MS}
          and i.heartbeat_flagged_at is not null and i.state in ${[...HEARTBEAT_STATES]}
          and not exists (select 1 from ${actions} a where a.agent_id = ${agentId} and a.instance_id = i.id and a.created_at >= e.created_at)
          and not exists (select 1 from ${notifications} n where n.agent_id = ${agentId}
            and (n.dedup_key = e.dedup_key or (n.instance_id = i.id and n.created_at >= e.created_at)))
        order by e.id`),
    };
  },
  decide(deps, agentId, rows, tick) {
    const told = new Set<string>();
    const alerts = rows.unanswered.filter((row) => !told.has(row.dedupKey) && told.add(row.dedupKey));
    const notices = combineWrites(
      alerts.map((row) => {
        const lastSeen = new Date(Number(row.lastSeenAt)).toISOString();
        return notificationStatements(deps, {
          agentId,
          runId: null,
          title: `Instance ${row.instanceId} stopped reporting`,
          body: `${row.instanceId} (${row.state}) has sent no report for ${Math.round((tick.now - Number(row.lastSeenAt)) / 1000)}s (last seen ${lastSeen}), and the agent did not act on it.`,
          severity: "warning",
          dedupKey: row.dedupKey,
          instanceId: row.instanceId,
        });
      }),
    );
    return {
      statements: notices.statements,
      async after(results) {
        await notices.after(results);
        const escalated = alerts.map((row) => row.instanceId);
        if (escalated.length) deps.log.info("missed heartbeats escalated to a human", { agentId, instances: escalated });
        return escalated;
      },
    };
  },
});
