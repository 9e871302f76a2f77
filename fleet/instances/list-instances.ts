/**
 * Read models of the fleet as fleetwarden sees it (the database, not a live provider call), for
 * the API and the dashboard: each instance with its latest state and its few most recent state
 * events, and one instance's history. Gone instances are kept and listed last, marked `gone`.
 */
import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instanceEvents, instances } from "../../schema/index.ts";
import { iso } from "../../runtime/time.ts";
import { costPerHour } from "../economics/instance-cost.ts";

export const RECENT_EVENTS_PER_INSTANCE = 5;

type InstanceEventRow = typeof instanceEvents.$inferSelect;

export function presentInstanceEvent(row: InstanceEventRow) {
  return {
    id: row.id,
    instanceId: row.instanceId,
    fromState: row.fromState,
    /** An instance state, or "gone" when the provider stopped listing the instance. */
    toState: row.toState,
    source: row.source,
    message: row.message,
    at: iso(row.at),
    eventId: row.eventId,
  };
}
export type InstanceEventView = ReturnType<typeof presentInstanceEvent>;

export async function listInstanceEvents(
  deps: Pick<FleetDeps, "db">,
  agentId: string,
  instanceId: string | undefined,
  limit: number,
): Promise<InstanceEventView[]> {
  const rows = await deps.db
    .select()
    .from(instanceEvents)
    .where(and(eq(instanceEvents.agentId, agentId), instanceId === undefined ? undefined : eq(instanceEvents.instanceId, instanceId)))
    .orderBy(desc(instanceEvents.id))
    .limit(limit);
  return rows.map(presentInstanceEvent);
}

export async function listInstances(deps: Pick<FleetDeps, "db">, agentId: string) {
  const { db } = deps;
  // Each instance's few latest history rows, read through (agent, instance, id) newest first and
  // stopped at the limit: the cost follows the fleet's size, never the length of its history.
  const latestOfInstance = sql`${instanceEvents.id} in (select x.id from ${instanceEvents} x
    where x.agent_id = ${instances.agentId} and x.instance_id = ${instances.id}
    order by x.id desc limit ${RECENT_EVENTS_PER_INSTANCE})`;
  const [rows, recent] = await db.batch([
    db
      .select()
      .from(instances)
      .where(eq(instances.agentId, agentId))
      // Webhook-only instances (no provider lists them) after the provider's, gone ones last.
      .orderBy(sql`${instances.goneAt} is not null`, asc(instances.webhookOnly), asc(instances.id)),
    db
      .select({ event: instanceEvents })
      .from(instances)
      .innerJoin(instanceEvents, latestOfInstance)
      .where(eq(instances.agentId, agentId))
      .orderBy(desc(instanceEvents.id)),
  ]);
  const byInstance = new Map<string, InstanceEventView[]>();
  for (const { event } of recent) {
    const list = byInstance.get(event.instanceId) ?? [];
    list.push(presentInstanceEvent(event));
    byInstance.set(event.instanceId, list);
  }
  return rows.map((row) => ({
    id: row.id,
    state: row.state,
    gpuName: row.gpuName,
    gpuCount: row.gpuCount,
    pricePerHour: row.pricePerHour,
    label: row.label,
    statusMessage: row.statusMessage,
    startedAt: iso(row.startedAt),
    lastSeenAt: iso(row.lastSeenAt),
    stateAt: iso(row.stateAt),
    reportsByWebhook: row.reportsByWebhook,
    webhookOnly: row.webhookOnly,
    heartbeatMissedAt: iso(row.heartbeatFlaggedAt),
    gone: row.goneAt !== null,
    goneAt: iso(row.goneAt),
    // Economics: the latest telemetry, the idle mark (fleet/instances/telemetry.ts) and the hourly cost now.
    gpuUtil: row.gpuUtil,
    gpuUtilAt: iso(row.gpuUtilAt),
    diskUsedPct: row.diskUsedPct,
    idleSince: iso(row.idleSince),
    // The instance's own progress counter (webhook only) and when it last moved: fleet/instances/stall.ts judges it.
    progress: row.progress,
    progressAt: iso(row.progressAt),
    progressMovedAt: iso(row.progressMovedAt),
    costPerHour: costPerHour(row),
    storagePerHour: row.storagePerHour,
    endsAt: iso(row.endsAt),
    interruptible: row.interruptible,
    // Lineage of a replacement (fleet/replacement/replacement.ts): the instance this one replaced, and its replacement.
    machineId: row.machineId,
    replaces: row.replaces,
    replacedBy: row.replacedBy,
    recentEvents: byInstance.get(row.id) ?? [],
  }));
}
export type InstanceView = Awaited<ReturnType<typeof listInstances>>[number];
