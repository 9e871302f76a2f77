/**
 * Read model of notifications for the API and dashboard: newest first, with each channel's outcome.
 * A failed delivery shows its HTTP status (`lastStatus`) to everyone; its error text, which holds
 * what the receiver answered, only with `withErrors` (admins): otherwise `lastError` is null.
 */
import { desc, eq, inArray } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { notificationDeliveries, notifications } from "../schema/index.ts";
import { iso } from "../runtime/time.ts";

export interface NotificationView {
  id: number;
  runId: number | null;
  title: string;
  body: string;
  severity: string;
  dedupKey: string;
  repeats: number;
  createdAt: string;
  deliveries: {
    id: number;
    channel: string;
    status: string;
    attempts: number;
    lastStatus: number | null;
    lastError: string | null;
    deliveredAt: string | null;
  }[];
}

export async function listNotifications(
  deps: Pick<PipelineDeps, "db">,
  agentId: string,
  limit = 50,
  options: { withErrors?: boolean } = {},
): Promise<NotificationView[]> {
  const rows = await deps.db
    .select()
    .from(notifications)
    .where(eq(notifications.agentId, agentId))
    .orderBy(desc(notifications.id))
    .limit(limit);
  if (rows.length === 0) return [];
  const sends = await deps.db
    .select()
    .from(notificationDeliveries)
    .where(
      inArray(
        notificationDeliveries.notificationId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(notificationDeliveries.id);
  return rows.map((n) => ({
    id: n.id,
    runId: n.runId,
    title: n.title,
    body: n.body,
    severity: n.severity,
    dedupKey: n.dedupKey,
    repeats: n.repeats,
    createdAt: iso(n.createdAt)!,
    deliveries: sends
      .filter((d) => d.notificationId === n.id)
      .map((d) => ({
        id: d.id,
        channel: d.channel,
        status: d.status,
        attempts: d.attempts,
        lastStatus: d.lastStatus,
        lastError: options.withErrors ? d.lastError : null,
        deliveredAt: iso(d.deliveredAt),
      })),
  }));
}
