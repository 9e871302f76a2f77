/**
 * What the agent remembers: conversation turns per epoch (with their token counts, measured when
 * written) and pinned memory facts saved with `remember`.
 */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const messages = sqliteTable(
  "messages",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    agentId: text().notNull(),
    sessionEpoch: integer().notNull(),
    runId: integer().notNull(),
    /** user | assistant | tool */
    role: text().notNull(),
    content: text().notNull().default(""),
    /** OpenAI tool_calls of an assistant turn, as sent. */
    toolCalls: text({ mode: "json" }),
    toolCallId: text(),
    /** The operator who wrote a human (user) turn; null for the agent's own turns and older rows. */
    operator: text(),
    tokens: integer().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [index("messages_epoch").on(t.agentId, t.sessionEpoch, t.id)],
);

export const memory = sqliteTable(
  "memory",
  {
    agentId: text().notNull(),
    key: text().notNull(),
    fact: text().notNull(),
    tokens: integer().notNull(),
    createdByRun: integer(),
    /** Written by a run whose input held text no operator typed (webhook messages, labels, tool output). */
    untrusted: integer({ mode: "boolean" }).notNull().default(false),
    updatedAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.key] })],
);
