/**
 * Agent-level state: run counter, session epoch, debounce slot and the single-flight lease.
 * One row per agent; every other table is keyed by agent id. The counters here are the only
 * source of run ids and slots, so they never go back (see pipeline/claim-run.ts).
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const agents = sqliteTable("agents", {
  id: text().primaryKey(),
  runCounter: integer().notNull().default(0),
  sessionEpoch: integer().notNull().default(1),
  /** Bumped every time the scheduled run moves; deliveries carry it so stale ones do nothing. */
  runSlot: integer().notNull().default(0),
  /** When the next run is scheduled (ms epoch), or null when none is. */
  nextRunAt: integer(),
  /** Run id holding the lease, a token unique to that claim, and when the lease expires. */
  leaseRunId: integer(),
  leaseToken: text(),
  leaseExpiresAt: integer(),
  /** Identity of the host process that took the lease; on start a Node host recovers only its own. */
  leaseHost: text(),
  /** Tokens of the last prompt sent to the LLM, as sent. */
  contextTokens: integer().notNull().default(0),
  lastReconciledAt: integer(),
  createdAt: integer().notNull(),
  /** Display name; the id when none was given. */
  name: text(),
  /** Per-agent overrides of the environment's defaults, JSON (runtime/agent-settings.ts validates it). */
  settings: text({ mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
  /** When the agent was archived (ms epoch): no more ticks, runs or ingest; its history is kept. */
  archivedAt: integer(),
  /**
   * This agent's own webhook secret (whsec_…); null for the default agent, which uses WEBHOOK_SECRET.
   * After a rotation the previous one still verifies until `webhookSecretPreviousUntil`.
   */
  webhookSecret: text(),
  webhookSecretPrevious: text(),
  webhookSecretPreviousUntil: integer(),
});

/** One row per conversation epoch: the persisted summary of its compacted turns. */
export const sessions = sqliteTable(
  "sessions",
  {
    agentId: text().notNull(),
    epoch: integer().notNull(),
    summary: text().notNull().default(""),
    summaryTokens: integer().notNull().default(0),
    /** Highest message id folded into the summary; older turns are not sent again. */
    summarizedThrough: integer().notNull().default(0),
    startedAt: integer().notNull(),
    /** The operator whose reset began this epoch (null for the first, or a reset by no one named). */
    startedBy: text(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.epoch] })],
);
