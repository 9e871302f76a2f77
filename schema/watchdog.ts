/**
 * The loop watchdog's conditions: one row per occurrence of a condition (kind) for an agent,
 * from when the cron tick first saw it until it cleared. A human is told once when it starts
 * and once when it clears; the `*NotifiedAt` columns make each of those happen once even if the
 * tick dies between noticing and notifying.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const watchdogConditions = sqliteTable(
  "watchdog_conditions",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    kind: text().notNull(),
    since: integer().notNull(),
    detail: text().notNull(),
    startNotifiedAt: integer(),
    clearedAt: integer(),
    clearNotifiedAt: integer(),
  },
  (t) => [index("watchdog_conditions_agent").on(t.agentId, t.kind, t.clearedAt)],
);
