/**
 * What makes the agent's decisions auditable: every LLM call's request and response, kept with
 * its run for LLM_TRANSCRIPT_DAYS, and the record of each replay of a run against a model.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const llmCalls = sqliteTable(
  "llm_calls",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    runId: integer().notNull(),
    /** 1, 2, … in the order the run made them (summaries included). */
    seq: integer().notNull(),
    /** chat | summary */
    purpose: text().notNull(),
    model: text().notNull(),
    /** {messages, tools} as sent. */
    request: text({ mode: "json" }).notNull(),
    /** The completion as received (choices, usage, finish_reason), or {error}. */
    response: text({ mode: "json" }).notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [index("llm_calls_run").on(t.agentId, t.runId, t.seq), index("llm_calls_created").on(t.createdAt)],
);

/** One replay of a recorded run against a model: the only thing a replay writes. */
export const replays = sqliteTable(
  "replays",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    runId: integer().notNull(),
    model: text().notNull(),
    operator: text().notNull(),
    /** {original, replay, same, differences} as answered. */
    result: text({ mode: "json" }).notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [index("replays_run").on(t.agentId, t.runId), index("replays_created").on(t.createdAt)],
);
