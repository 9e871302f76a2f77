/**
 * Escalation of a missed heartbeat (a cron check): once the run that heard about a silent
 * instance has finished (its heartbeat event is consumed), if the instance is still silent and
 * the agent neither acted on it (an action on that instance) nor told a human about it (a
 * notification about that instance) since the event, a human is told, once per silence: the
 * notification's key names the last report, and a key already used is never used again.
 */
import { and, eq, gte, inArray, isNotNull, gt, sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { actions, events, instances, notifications } from "../schema/index.ts";
import { notifyHuman } from "../notify/notify-human.ts";
import type { TickCheck } from "../triggers/cron-tick.ts";
import { HEARTBEAT_STATES } from "./heartbeat.ts";

/** Heartbeat events older than this are not looked at again. */
const LOOKBACK_MS = 24 * 3_600_000;

export async function escalateMissedHeartbeats(deps: Deps, agentId: string): Promise<string[]> {
  const { db, clock } = deps;
  const now = clock.now();
  const heard = await db
    .select()
    .from(events)
    .where(and(eq(events.agentId, agentId), eq(events.source, "heartbeat"), eq(events.status, "consumed"), gt(events.createdAt, now - LOOKBACK_MS)));
  const escalated: string[] = [];
  for (const event of heard) {
    const p = event.payload as { instanceId?: unknown; lastSeenAt?: unknown };
    if (typeof p.instanceId !== "string" || typeof p.lastSeenAt !== "string") continue;
    const lastSeenAt = Date.parse(p.lastSeenAt);
    const dedupKey = `heartbeat:${p.instanceId}:${lastSeenAt}`;
    const [silent, acted, told] = await db.batch([
      db
        .select({ id: instances.id, state: instances.state })
        .from(instances)
        .where(
          and(
            eq(instances.agentId, agentId),
            eq(instances.id, p.instanceId),
            eq(instances.lastSeenAt, lastSeenAt),
            isNotNull(instances.heartbeatFlaggedAt),
            inArray(instances.state, [...HEARTBEAT_STATES]),
          ),
        ),
      db
        .select({ id: actions.id })
        .from(actions)
        .where(and(eq(actions.agentId, agentId), eq(actions.instanceId, p.instanceId), gte(actions.createdAt, event.createdAt)))
        .limit(1),
      db
        .select({ id: notifications.id })
        .from(notifications)
        .where(
          and(
            eq(notifications.agentId, agentId),
            sql`(${notifications.dedupKey} = ${dedupKey} or (${notifications.instanceId} = ${p.instanceId} and ${notifications.createdAt} >= ${event.createdAt}))`,
          ),
        )
        .limit(1),
    ]);
    if (!silent[0] || acted[0] || told[0]) continue;
    const silentForS = Math.round((now - lastSeenAt) / 1000);
    await notifyHuman(deps, {
      agentId,
      runId: null,
      title: `Instance ${p.instanceId} stopped reporting`,
      body: `${p.instanceId} (${silent[0].state}) has sent no report for ${silentForS}s (last seen ${p.lastSeenAt}), and the agent did not act on it.`,
      severity: "warning",
      dedupKey,
      instanceId: p.instanceId,
    });
    escalated.push(p.instanceId);
  }
  return escalated;
}

export const checkMissedHeartbeats: TickCheck = async function checkMissedHeartbeats(deps, agentId) {
  const escalated = await escalateMissedHeartbeats(deps, agentId);
  if (escalated.length) deps.log.info("missed heartbeats escalated to a human", { agentId, instances: escalated });
};
