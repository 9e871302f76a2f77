/**
 * notifyHuman: the one way anything tells a person something. A notification is stored (and so
 * listed in the API and dashboard) and fanned out to every configured outbound channel. The same
 * alert inside the dedup window is folded into the stored one (`repeats` + 1) and sends nothing,
 * so a flapping instance cannot flood a channel. Channel sends normally never happen here: each
 * channel gets a notification_deliveries row and a scheduler delivery, so a slow or failing webhook
 * never blocks the run that raised the alert. When the scheduler refuses that publish (QStash at
 * its quota, down), the delivery is sent here and now instead: an alert is never left waiting on
 * the channel that failed (the watchdog's "the scheduler refuses publishes" above all).
 *
 * A run's notifications are bounded (notify/notification-bounds.ts): past NOTIFICATIONS_PER_RUN
 * for the run or NOTIFICATIONS_PER_HOUR for the agent, a new one is refused (not stored, nothing
 * sent; the result says why) and a human is told once per run (`tellBoundOnce`). Notices no run
 * makes, approval pages and the told-once notice itself are exempt (`bounded: false`).
 */
import { and, desc, eq, gt, sql, type SQL } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { notificationDeliveries, notifications, onceNotices } from "../schema/index.ts";
import { CHANNEL_NAMES, type ChannelName, type Severity } from "./channels/channel.ts";
import { fencedWrite, type RunFence } from "../pipeline/index.ts";
import { insertWhere } from "../db/insert-where.ts";
import { deliverNotification } from "./deliver-notification.ts";
import { notificationBoundRefusal, underNotificationBounds } from "./notification-bounds.ts";

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
  /**
   * Whether the run bounds apply; by default when a run notifies. False for what another bound
   * already stops (an approval's page) and for the told-once notice about a bound.
   */
  bounded?: boolean;
  /** The approval this notification asks for or follows up (Slack gets buttons, ntfy a view action). */
  approvalId?: number | null;
}

export interface NotifyResult {
  /** null when refused. */
  notificationId: number | null;
  deduplicated: boolean;
  /** Why a run bound refused it: nothing was stored or sent. */
  refused?: string;
}

/** The default dedup key: the title, case- and whitespace-insensitive. */
export function titleDedupKey(title: string): string {
  return `title:${title.trim().toLowerCase().replace(/\s+/g, " ").slice(0, 200)}`;
}

export function configuredChannels(deps: Pick<PipelineDeps, "config">): ChannelName[] {
  return CHANNEL_NAMES.filter((name) => Boolean(deps.config.channels[name]));
}

/** Stores (or folds) the notification under the notifying run's fence, then publishes its deliveries. */
export async function notifyHuman(deps: NotifyDeps, n: HumanNotification): Promise<NotifyResult> {
  const result = await fencedWrite(
    deps,
    n.fence,
    `notifying "${n.title.slice(0, 80)}"`,
    async (holds) => {
      const { statements, after } = storeNotification(deps, n, holds);
      return after(await deps.db.batch(statements));
    },
    // A refusal is told only while the fence holds: a lost fence refuses too.
    (stored) => stored !== undefined && stored !== "refused",
  );
  if (!result) throw new Error("notification was neither stored nor folded");
  if (result !== "refused") return result;
  const refused = await notificationBoundRefusal(deps, n.agentId, n.runId);
  deps.log.info("notification refused by a bound", { agentId: n.agentId, runId: n.runId, title: n.title, refused });
  await tellBoundOnce(deps, {
    agentId: n.agentId,
    runId: n.runId,
    fence: n.fence,
    kind: "notifications",
    detail: `${refused}. Refused: "${n.title.slice(0, 200)}".`,
  });
  return { notificationId: null, deduplicated: false, refused };
}

/** What a bound refused, for the one notice a run gets about it. */
export interface BoundRefusal {
  agentId: string;
  runId: number | null;
  fence?: RunFence | null;
  /** actions | notifications | approvals */
  kind: string;
  detail: string;
}

/**
 * Tells a human, once per run and kind, that a run bound refused something: the once-mark
 * `bound:<runId>:<kind>` in once_notices is inserted first, and only the run that inserted it
 * sends the notice, so a run hitting the bound ten times tells once. Exempt from the bounds itself.
 */
export async function tellBoundOnce(deps: NotifyDeps, refusal: BoundRefusal): Promise<void> {
  const { agentId, runId, fence } = refusal;
  if (runId === null) return;
  const key = `bound:${runId}:${refusal.kind}`;
  const now = deps.clock.now();
  const marked = await fencedWrite(deps, fence, `marking the ${refusal.kind} bound notice`, (holds) =>
    insertWhere(deps.db, onceNotices, { agentId, key, notificationId: null, at: now }, holds)
      .onConflictDoNothing()
      .returning({ key: onceNotices.key }),
  );
  if (marked.length === 0) return;
  const sent = await notifyHuman(deps, {
    agentId,
    runId,
    title: `Run ${runId} hit its ${refusal.kind} bound`,
    body: `${refusal.detail}\nFurther ${refusal.kind} of this run past the bound are refused without another notice.`,
    severity: "warning",
    dedupKey: key,
    fence,
    bounded: false,
  });
  await deps.db
    .update(onceNotices)
    .set({ notificationId: sent.notificationId })
    .where(and(eq(onceNotices.agentId, agentId), eq(onceNotices.key, key)));
}

/**
 * notifyHuman as statements for a caller's batch (the cron tick writes all its alerts in one):
 * commit `statements` in one batch (one transaction), then call `after` with their results, which
 * publishes the channel deliveries. For notifications no run makes: they carry no fence.
 */
export function notificationStatements(deps: NotifyDeps, n: Omit<HumanNotification, "fence">) {
  const { statements, after } = storeNotification(deps, { ...n, bounded: false }, undefined);
  return {
    statements,
    async after(results: readonly unknown[]): Promise<NotifyResult> {
      const result = await after(results);
      if (!result || result === "refused") throw new Error("notification was neither stored nor folded");
      return result;
    },
  };
}

/**
 * The batch that folds the notification into the stored one inside the dedup window, or stores it
 * with one delivery per channel, each write only where `holds` (a run's fence); and what follows
 * its commit: publishing the deliveries. `after` answers nothing when neither write applied, and
 * "refused" when a bounded notification was neither folded nor under its run bounds.
 */
function storeNotification(deps: NotifyDeps, n: Omit<HumanNotification, "fence">, holds: SQL | undefined) {
  const { db, clock, config } = deps;
  const now = clock.now();
  const dedupKey = n.dedupKey ?? titleDedupKey(n.title);
  const since = now - config.notifyDedupWindowMs;
  const inWindow = and(eq(notifications.agentId, n.agentId), eq(notifications.dedupKey, dedupKey), gt(notifications.createdAt, since));
  const channels = configuredChannels(deps);
  const bounded = (n.bounded ?? n.runId !== null) && n.runId !== null;
  const bound = bounded ? underNotificationBounds(deps, n.agentId, n.runId!, now) : undefined;
  // The notification this batch stores: the newest of its key stored now, not a fold.
  const storedNow = sql`(select max(${notifications.id}) from ${notifications} where ${notifications.agentId} = ${n.agentId}
    and ${notifications.dedupKey} = ${dedupKey} and ${notifications.createdAt} = ${now} and ${notifications.repeats} = 0)`;

  // One batch (one transaction): fold into the stored alert, or store a new one with its
  // channel deliveries. Never half of it, so a crash cannot leave an alert that is never sent.
  const statements = [
    db
      .update(notifications)
      .set({ repeats: sql`${notifications.repeats} + 1` })
      .where(
        and(
          eq(
            notifications.id,
            db.select({ id: notifications.id }).from(notifications).where(inWindow).orderBy(desc(notifications.id)).limit(1),
          ),
          holds,
        ),
      )
      .returning({ id: notifications.id }),
    insertWhere(
      db,
      notifications,
      {
        agentId: n.agentId,
        runId: n.runId,
        title: n.title,
        body: n.body,
        severity: n.severity,
        dedupKey,
        instanceId: n.instanceId ?? null,
        approvalId: n.approvalId ?? null,
        repeats: 0,
        createdAt: now,
      },
      and(sql`not exists (select 1 from ${notifications} where ${inWindow})`, bound, holds)!,
    ).returning({ id: notifications.id }),
    ...(channels.length
      ? [
          insertWhere(
            db,
            notificationDeliveries,
            { notificationId: sql`${notifications.id}`, channel: sql`c.column1`, status: "pending", attempts: 0 },
            and(
              eq(notifications.id, storedNow),
              sql`not exists (select 1 from ${notificationDeliveries} where ${notificationDeliveries.notificationId} = ${notifications.id})`,
            )!,
            sql`${notifications}, (values ${sql.join(
              channels.map((c) => sql`(${c})`),
              sql`, `,
            )}) c`,
          ).returning({ id: notificationDeliveries.id, channel: notificationDeliveries.channel }),
        ]
      : []),
  ] as const;

  async function after(results: readonly unknown[]): Promise<NotifyResult | "refused" | undefined> {
    const [folded, inserted, deliveries = []] = results as [{ id: number }[], { id: number }[], { id: number; channel: ChannelName }[]?];
    const notificationId = inserted[0]?.id ?? folded[0]?.id;
    if (notificationId === undefined) return bounded ? "refused" : undefined;
    if (!inserted[0]) return { notificationId, deduplicated: true };
    deps.log.info("notification sent", {
      agentId: n.agentId,
      notificationId,
      runId: n.runId,
      severity: n.severity,
      title: n.title,
      channels,
    });

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
          deps.log.error("sending a notification delivery failed", {
            deliveryId: delivery.id,
            channel: delivery.channel,
            error: String(sendError),
          }),
        );
      }
    }
    return { notificationId, deduplicated: false };
  }
  return { statements: statements as unknown as [(typeof statements)[0], ...(typeof statements)[number][]], after };
}
