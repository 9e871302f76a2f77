/**
 * Sends one notification delivery (one notification to one channel), called for a scheduler
 * delivery `{type: "notify", deliveryId}`. Every attempt is counted and its error recorded on the
 * row: the HTTP status (`lastStatus`, what viewers see) and the error with the channel's answer
 * (`lastError`, admins only: a receiver's body may hold anything). A retryable failure (timeout, network, 429, 5xx) is thrown so the scheduler retries with
 * backoff; a permanent one, or the last allowed attempt, marks the row failed and returns, so a
 * dead channel is retried a bounded number of times and the outcome is visible in the API.
 * Idempotent: a delivered or failed row is left alone when the scheduler repeats itself. An
 * agent's own channel URL whose name resolves to a private address is failed unsent.
 */
import { and, eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { approvals, notificationDeliveries, notifications } from "../schema/index.ts";
import { approvalLink } from "./approval-links.ts";
import { CHANNEL_NAMES, ChannelError, type ChannelName, type Severity } from "./channels/channel.ts";
import { sendToChannel } from "./channels/send-to-channel.ts";
import { resolvedAddressProblem } from "../runtime/outbound-url.ts";

/** Attempts per channel delivery before it is recorded failed. */
export const NOTIFY_MAX_ATTEMPTS = 4;

/** Our bound must not outlast the scheduler's own retries, or the final failure goes unrecorded. */
export function maxAttempts(deps: Pick<PipelineDeps, "config" | "scheduler">): number {
  if (deps.scheduler.kind !== "qstash") return NOTIFY_MAX_ATTEMPTS;
  return Math.max(1, Math.min(NOTIFY_MAX_ATTEMPTS, deps.config.qstash.retries + 1));
}

export async function deliverNotification(deps: PipelineDeps, deliveryId: number): Promise<void> {
  const { db, log } = deps;
  // Count the attempt before sending, so even a crash mid-send uses one up.
  const [claimed] = await db
    .update(notificationDeliveries)
    .set({ attempts: sql`${notificationDeliveries.attempts} + 1` })
    .where(and(eq(notificationDeliveries.id, deliveryId), eq(notificationDeliveries.status, "pending")))
    .returning();
  if (!claimed) return; // unknown, delivered or failed: nothing left to do
  const [notification] = await db.select().from(notifications).where(eq(notifications.id, claimed.notificationId));

  const channel = claimed.channel as ChannelName;
  const url = CHANNEL_NAMES.includes(channel) ? deps.config.channels[channel] : undefined;
  if (!notification || !url) {
    await recordOutcome(deps, deliveryId, "failed", notification ? `channel ${channel} is not configured` : "notification is gone");
    return;
  }

  const refused = await agentUrlRefused(deps, channel, url);
  if (refused) {
    log.error("notification delivery refused: the agent's channel URL points at a private address", {
      deliveryId,
      channel,
      error: refused,
    });
    await recordOutcome(deps, deliveryId, "failed", `${channel}: ${refused} (ALLOW_PRIVATE_URLS=true allows it)`);
    return;
  }

  try {
    await sendToChannel(
      channel,
      url,
      {
        title: notification.title,
        body: notification.body,
        severity: notification.severity as Severity,
        ...(await approvalOf(deps, notification)),
      },
      undefined,
      { discordThreadName: deps.config.discordThreadName },
    );
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    const retryable = err instanceof ChannelError ? err.retryable : true;
    const httpStatus = err instanceof ChannelError ? err.status : null;
    const lastAttempt = claimed.attempts >= maxAttempts(deps);
    if (!retryable || lastAttempt) {
      log.error("notification delivery failed for good", { deliveryId, channel, attempts: claimed.attempts, error });
      await recordOutcome(deps, deliveryId, "failed", error, httpStatus);
      return;
    }
    await recordOutcome(deps, deliveryId, "pending", error, httpStatus);
    throw err instanceof Error ? err : new Error(error);
  }
  await recordOutcome(deps, deliveryId, "delivered", null);
}

/**
 * An agent's own channel URL, resolved where it is sent (Node): every address must be public
 * unless ALLOW_PRIVATE_URLS=true (docs/api.md "Outbound URLs"). Environment URLs are the
 * deployer's and are not checked; Workers have no resolver here and cannot reach private hosts.
 */
async function agentUrlRefused(deps: PipelineDeps, channel: ChannelName, url: string): Promise<string | null> {
  if (deps.config.allowPrivateUrls || !deps.config.agentChannels.includes(channel) || !deps.resolveHost) return null;
  return resolvedAddressProblem(url, deps.resolveHost);
}

async function recordOutcome(
  deps: Pick<PipelineDeps, "db" | "clock">,
  deliveryId: number,
  status: "pending" | "delivered" | "failed",
  error: string | null,
  httpStatus: number | null = null,
) {
  await deps.db
    .update(notificationDeliveries)
    .set({
      status,
      ...(error === null ? {} : { lastError: error.slice(0, 1000), lastStatus: httpStatus }),
      ...(status === "delivered" ? { deliveredAt: deps.clock.now() } : {}),
    })
    .where(eq(notificationDeliveries.id, deliveryId));
}

/** An approval's notification links to it; its buttons are offered only while it is pending. */
async function approvalOf(deps: Pick<PipelineDeps, "db" | "config">, notification: typeof notifications.$inferSelect) {
  if (notification.approvalId === null) return {};
  const [row] = await deps.db.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, notification.approvalId));
  const { agentId, approvalId } = { agentId: notification.agentId, approvalId: notification.approvalId };
  return { approval: { agentId, approvalId, url: approvalLink(deps.config, agentId, approvalId), decidable: row?.status === "pending" } };
}
