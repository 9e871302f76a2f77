/**
 * The scheduler's health, kept in the database so every isolate and /healthz see the same thing:
 * one row per scheduler kind, written when a process sees publishing change state (the first
 * refused publish after successes, the first accepted one after refusals), never per publish.
 * While `failingSince` is set, the cron invocation does due work itself and the watchdog raises
 * `scheduler_failing` (pipeline/scheduler-health.ts).
 */
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const schedulerHealth = sqliteTable("scheduler_health", {
  /** The scheduler's kind (`qstash`, `local`). */
  kind: text().primaryKey(),
  /** When publishes started failing (ms epoch), or null while they succeed. */
  failingSince: integer(),
  /** The last refusal's error, cut to 500 characters. */
  lastError: text(),
  lastFailureAt: integer(),
  /** The success that last ended a failure, or the first a process saw. */
  lastSuccessAt: integer(),
});
