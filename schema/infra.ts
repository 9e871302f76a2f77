/**
 * Host plumbing kept in the database so it survives restarts: the local scheduler's durable
 * deliveries, QStash token ids already accepted (replay guard), and circuit breakers.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const deliveries = sqliteTable(
  "deliveries",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    dedupKey: text().notNull().unique(),
    body: text({ mode: "json" }).notNull(),
    /** pending | delivered | failed (gave up after the last retry) */
    status: text().notNull().default("pending"),
    dueAt: integer().notNull(),
    attempts: integer().notNull().default(0),
    /** Set while a handler holds it; `dueAt` is then the visibility timeout. */
    claimedAt: integer(),
    lastError: text(),
    createdAt: integer().notNull(),
    deliveredAt: integer(),
  },
  (t) => [
    index("deliveries_due").on(t.status, t.dueAt),
    // Retention finds old finished deliveries without reading the pending ones.
    index("deliveries_finished").on(t.createdAt).where(sql`status in ('delivered', 'failed')`),
  ],
);

export const acceptedSignatures = sqliteTable("accepted_signatures", {
  jti: text().primaryKey(),
  expiresAt: integer().notNull(),
});

export const breakers = sqliteTable("breakers", {
  name: text().primaryKey(),
  failures: integer().notNull().default(0),
  openUntil: integer(),
  /** A failure retries cannot fix (the server refuses the request's shape), until a call succeeds. */
  misconfigured: text(),
  updatedAt: integer().notNull(),
});

/** The health check's write probe: one row, overwritten by every GET /healthz. */
export const healthProbe = sqliteTable("health_probe", {
  id: integer().primaryKey(),
  checkedAt: integer().notNull(),
});

/**
 * Node processes holding this database, one row per host identity: a second process with the
 * same identity refuses to start while the holder's pid is alive (see functions/host/host-lock.ts).
 */
export const nodeHosts = sqliteTable("node_hosts", {
  hostId: text().primaryKey(),
  pid: integer().notNull(),
  startedAt: integer().notNull(),
});
