/**
 * Notifications for humans (stored and listed; deduplicated by key within a window) and the
 * outcome of each outbound channel delivery.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const notifications = sqliteTable(
  "notifications",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    runId: integer(),
    title: text().notNull(),
    body: text().notNull(),
    /** info | warning | critical */
    severity: text().notNull(),
    dedupKey: text().notNull(),
    /** The instance the alert is about, when it is about one (the watchdog counts storms by it). */
    instanceId: text(),
    /** How many repeats inside the dedup window were folded into this one. */
    repeats: integer().notNull().default(0),
    /** The approval this notification asks for (Slack gets Approve/Reject buttons, ntfy a view action). */
    approvalId: integer(),
    createdAt: integer().notNull(),
  },
  (t) => [
    index("notifications_dedup").on(t.agentId, t.dedupKey, t.createdAt),
    index("notifications_recent").on(t.agentId, t.id),
    // The per-run and per-hour notification bounds count without reading the history.
    index("notifications_run").on(t.agentId, t.runId),
    index("notifications_created").on(t.agentId, t.createdAt),
  ],
);

export const notificationDeliveries = sqliteTable(
  "notification_deliveries",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    notificationId: integer().notNull(),
    /** slack | discord | ntfy */
    channel: text().notNull(),
    /** pending | delivered | failed */
    status: text().notNull().default("pending"),
    attempts: integer().notNull().default(0),
    /** The channel's last HTTP status (what viewers see); lastError holds its answer, for admins only. */
    lastStatus: integer(),
    lastError: text(),
    deliveredAt: integer(),
  },
  (t) => [index("notification_deliveries_notification").on(t.notificationId)],
);
