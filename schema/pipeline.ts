/**
 * The trigger pipeline's records: the inbox (events), the agent's own wakes, and one row per run.
 * An event or wake is consumed by setting its run id in the same batch that claims the run.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const events = sqliteTable(
  "events",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    /** human | manual | webhook | reconcile | heartbeat | approval | overdue */
    source: text().notNull(),
    /** 0 = human/manual (short debounce), 1 = state change / wake (long debounce). */
    priority: integer().notNull(),
    dedupKey: text().notNull(),
    payload: text({ mode: "json" }).notNull(),
    /** pending | consumed | dropped (dropReason: superseded | unchanged | poison) */
    status: text().notNull().default("pending"),
    dropReason: text(),
    runId: integer(),
    /** How many runs claimed it and then crashed or failed before one succeeded. */
    attempts: integer().notNull().default(0),
    createdAt: integer().notNull(),
    consumedAt: integer(),
  },
  (t) => [
    uniqueIndex("events_dedup").on(t.agentId, t.dedupKey),
    index("events_status").on(t.agentId, t.status),
    index("events_run").on(t.agentId, t.runId),
    // Retention finds old dropped events without reading the rest.
    index("events_dropped").on(t.createdAt).where(sql`status = 'dropped'`),
    // The events list pages newest first by id; retention prunes consumed events by age.
    index("events_recent").on(t.agentId, t.id),
    index("events_consumed").on(t.createdAt).where(sql`status = 'consumed'`),
  ],
);

export const wakes = sqliteTable(
  "wakes",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    dueAt: integer().notNull(),
    reason: text().notNull(),
    /** pending | consumed | cancelled | dropped */
    status: text().notNull().default("pending"),
    /** Why it was dropped: `poison` (handed back by failed or crashed runs MAX_EVENT_ATTEMPTS times). */
    dropReason: text(),
    /** How many runs claimed it and then crashed or failed. */
    attempts: integer().notNull().default(0),
    createdByRun: integer(),
    /** What a re-check is about: the instance, and the state it should be in by then. */
    instanceId: text(),
    awaitState: text(),
    consumedByRun: integer(),
    createdAt: integer().notNull(),
    consumedAt: integer(),
  },
  (t) => [
    index("wakes_due").on(t.agentId, t.status, t.dueAt),
    index("wakes_consumed").on(t.agentId, t.consumedByRun),
    index("wakes_recent").on(t.agentId, t.id),
    index("wakes_created").on(t.agentId, t.createdAt),
    // The wakes a run created (its page).
    index("wakes_by_run").on(t.agentId, t.createdByRun),
  ],
);

export const runs = sqliteTable(
  "runs",
  {
    agentId: text().notNull(),
    runId: integer().notNull(),
    /** running | succeeded | failed | crashed | skipped */
    status: text().notNull(),
    noop: integer({ mode: "boolean" }),
    /** none (minimal step) | llm | rules */
    decider: text(),
    sessionEpoch: integer().notNull(),
    promptTokens: integer().notNull().default(0),
    completionTokens: integer().notNull().default(0),
    contextTokens: integer().notNull().default(0),
    /** What compaction did before each LLM call, as recorded by the agent. */
    compaction: text({ mode: "json" }),
    /** Events and wakes it consumed, copied at claim so the record survives re-claims. */
    triggers: text({ mode: "json" }).notNull().default([]),
    wakesConsumed: text({ mode: "json" }).notNull().default([]),
    reply: text(),
    /** The model's output limit cut a message of this run (finish_reason `length`); its reply says so. */
    truncated: integer({ mode: "boolean" }).notNull().default(false),
    /** A reply or tool argument over the model-output cap was cut before it was counted or stored. */
    outputCut: integer({ mode: "boolean" }).notNull().default(false),
    error: text(),
    startedAt: integer().notNull(),
    finishedAt: integer(),
  },
  (t) => [
    primaryKey({ columns: [t.agentId, t.runId] }),
    // The overview's runs-per-hour chart reads only the window it draws.
    index("runs_started").on(t.agentId, t.startedAt),
    // GET /metrics counts runs, tokens and durations per agent, status and decider from this index alone.
    index("runs_metrics").on(t.agentId, t.status, t.decider, t.startedAt, t.finishedAt, t.promptTokens, t.completionTokens),
  ],
);
