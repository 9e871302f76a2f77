/**
 * notifyHuman: the one way anything tells a person something. A notification is stored (and so
 * listed in the API and dashboard) and fanned out to every configured outbound channel. The same
 * alert inside the dedup window is folded into the stored one (`repeats` + 1) and sends nothing,
 * so a flapping instance cannot flood a channel. Channel sends normally never happen here: each
 * channel gets a notification_deliveries row and a scheduler delivery, so a slow or failing webhook
 * never blocks the run that raised the alert. When the scheduler refuses that publish (QStash at
 * its quota, down), the delivery is sent here and now instead: an alert is never left waiting on
 * the channel that failed (the watchdog's "the scheduler refuses publishes" above all).
 */
import { sql } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { notificationDeliveries, notifications } from "../schema/index.ts";
import { CHANNEL_NAMES, type ChannelName, type Severity } from "./channels/channel.ts";
import { fenceHolds, refusedUnlessFenced, type RunFence } from "../pipeline/index.ts";
import { deliverNotification } from "./deliver-notification.ts";

export type { Severity } from "./channels/channel.ts";

/** What telling a person needs: storing the alert and publishing its channel deliveries. */
export type NotifyDeps = Pick<PipelineDeps, "db" | "clock" | "config" | "scheduler" | "log">;

export interface HumanNotification {
  agentId: string;
  runId: number | null;
  title: string;
  body: string;
  severity: Severity;
  /** Identifies "the same alert"; defaults to the normalised title. */
  dedupKey?: string;
  /** The notifying run's fence; absent or null when no run notifies (the cron tick, a human). */
  fence?: RunFence | null;
  /** The instance the alert is about, if one (the watchdog counts alerts per instance). */
  instanceId?: string | null;
}

export interface NotifyResult {
  notificationId: number;
  deduplicated: boolean;
}

/** The default dedup key: the title, case- and whitespace-insensitive. */
export function titleDedupKey(title: string): string {
  return `title:${title.trim().toLowerCase().replace(/\s+/g, " ").slice(0, 200)}`;
}

export function configuredChannels(deps: Pick<PipelineDeps, "config">): ChannelName[] {
  return CHANNEL_NAMES.filter((name) => Boolean(deps.config.channels[name]));
}

export async function notifyHuman(deps: NotifyDeps, n: HumanNotification): Promise<NotifyResult> {
  const { statements, after } = notificationStatements(deps, n);
  return after(await deps.db.batch(statements));
}

/**
 * notifyHuman as statements for a caller's batch (the cron tick writes all its alerts in one):
 * commit `statements` in one batch (one transaction), then call `after` with their results, which
 * publishes the channel deliveries.
 */
export function notificationStatements(deps: NotifyDeps, n: HumanNotification) {
  const { db, clock, config } = deps;
  const now = clock.now();
  const dedupKey = n.dedupKey ?? titleDedupKey(n.title);
  const since = now - config.notifyDedupWindowMs;
  const inWindow = sql`agent_id = ${n.agentId} and dedup_key = ${dedupKey} and created_at > ${since}`;
  const fenced = fenceHolds(n.fence, now);
  const channels = configuredChannels(deps);

  // One batch (one transaction): fold into the stored alert, or store a new one with its
  // channel deliveries. Never half of it, so a crash cannot leave an alert that is never sent.
  const statements = [
    db.all<{ id: number }>(sql`update ${notifications} set repeats = repeats + 1
      where id = (select id from ${notifications} where ${inWindow} order by id desc limit 1) and ${fenced}
      returning id`),
    db.all<{ id: number }>(sql`insert into ${notifications} (agent_id, run_id, title, body, severity, dedup_key, instance_id, repeats, created_at)
      select ${n.agentId}, ${n.runId}, ${n.title}, ${n.body}, ${n.severity}, ${dedupKey}, ${n.instanceId ?? null}, 0, ${now}
      where not exists (select 1 from ${notifications} where ${inWindow}) and ${fenced}
      returning id`),
    ...(channels.length
      ? [
          db.all<{ id: number; channel: ChannelName }>(sql`insert into ${notificationDeliveries} (notification_id, channel, status, attempts)
        select n.id, c.column1, 'pending', 0
        from ${notifications} n, (values ${sql.join(channels.map((c) => sql`(${c})`), sql`, `)}) c
        where n.id = (select max(id) from ${notifications}
                      where agent_id = ${n.agentId} and dedup_key = ${dedupKey} and created_at = ${now} and repeats = 0)
          and not exists (select 1 from ${notificationDeliveries} d where d.notification_id = n.id)
        returning id, channel`),
        ]
      : []),
  ] as const;

  async function after(results: readonly unknown[]): Promise<NotifyResult> {
    const [folded, inserted, deliveries = []] = results as [{ id: number }[], { id: number }[], { id: number; channel: ChannelName }[]?];
    const notificationId = inserted[0]?.id ?? folded[0]?.id;
    if (notificationId === undefined) {
      await refusedUnlessFenced(deps, n.fence, `notifying "${n.title.slice(0, 80)}"`);
      throw new Error("notification was neither stored nor folded");
    }
    if (!inserted[0]) return { notificationId, deduplicated: true };
    deps.log.info("notification sent", { agentId: n.agentId, notificationId, runId: n.runId, severity: n.severity, title: n.title, channels });

    for (const delivery of deliveries) {
      try {
        await deps.scheduler.publish({
          dedupKey: `notify:${delivery.id}`,
          notBefore: now,
          body: { type: "notify", agentId: n.agentId, deliveryId: delivery.id },
        });
      } catch (err) {
        deps.log.error("publishing a notification delivery failed; sending it now", {
          notificationId,
          deliveryId: delivery.id,
          channel: delivery.channel,
          error: String(err),
        });
        // One attempt, counted on the row like any other; a failure is recorded there.
        await deliverNotification(deps, delivery.id).catch((sendError: unknown) =>
          deps.log.error("sending a notification delivery failed", { deliveryId: delivery.id, channel: delivery.channel, error: String(sendError) }),
        );
      }
    }
    return { notificationId, deduplicated: false };
  }
  return { statements: statements as unknown as [(typeof statements)[0], ...(typeof statements)[number][]], after };
}
