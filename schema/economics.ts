/**
 * What the fleet costs and whether it works: telemetry samples per instance (GPU utilisation and
 * disk use, for the idle rule's window and the dashboard's sparkline), estimated spend per
 * instance per UTC day, and the marks that make every economics notice reach a human once.
 */
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const instanceTelemetry = sqliteTable(
  "instance_telemetry",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    instanceId: text().notNull(),
    gpuUtil: real(),
    diskUsedPct: real(),
    /** The instance's progress counter when reported (webhook only). */
    progress: real(),
    /** webhook | vast | simulator */
    source: text().notNull(),
    at: integer().notNull(),
  },
  (t) => [index("instance_telemetry_instance").on(t.agentId, t.instanceId, t.at), index("instance_telemetry_at").on(t.at)],
);

/** Estimated spend (price × time in each billed state), accrued per instance per UTC day. */
export const instanceSpend = sqliteTable(
  "instance_spend",
  {
    agentId: text().notNull(),
    instanceId: text().notNull(),
    /** YYYY-MM-DD, UTC. */
    day: text().notNull(),
    usd: real().notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.day, t.instanceId] })],
);

/**
 * A notice that must reach a human once: its key names what it is about and the episode
 * (`idle:<instance>:<idleSince>`, `budget:<day>:80`, `expiry:<instance>:<endsAt>`, …); inserting
 * an existing key does nothing, so the notice is sent by whoever inserted it first.
 */
export const onceNotices = sqliteTable(
  "once_notices",
  {
    agentId: text().notNull(),
    key: text().notNull(),
    notificationId: integer(),
    at: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.key] })],
);

/**
 * The provider account's credit balance as last read (fleet/economics/balance-check.ts), one row per
 * agent: read at most every 10 minutes; `attemptAt` moves even when the read fails.
 */
export const providerBalances = sqliteTable("provider_balances", {
  agentId: text().primaryKey(),
  usd: real(),
  /** When `usd` was read. */
  at: integer(),
  /** When a read was last tried, and why it failed (null when it worked). */
  attemptAt: integer().notNull(),
  error: text(),
});
