/**
 * Who may operate fleetwarden, and the state that proves it: named operators with a role and a
 * hashed token, dashboard sessions (hashed id, per-session CSRF token, expiry, revocation), the
 * sign-in form's single-use tokens, failed-authentication counters (throttling that holds across
 * Worker isolates), and the activity log that names the operator behind every human decision.
 * Nothing secret is stored in the clear: tokens and session ids are SHA-256 hashes.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const operators = sqliteTable("operators", {
  id: integer().primaryKey({ autoIncrement: true }),
  name: text().notNull().unique(),
  /** viewer | operator | admin */
  role: text().notNull(),
  tokenHash: text().notNull().unique(),
  createdBy: text().notNull(),
  createdAt: integer().notNull(),
  revokedAt: integer(),
  /** The Slack user (U…) who is this operator when deciding from Slack. */
  slackUserId: text().unique(),
});

export const operatorSessions = sqliteTable(
  "operator_sessions",
  {
    /** SHA-256 of the cookie's random id; the id itself is never stored. */
    idHash: text().primaryKey(),
    /** 0 is the bootstrap admin (ADMIN_TOKEN), which has no operators row. */
    operatorId: integer().notNull(),
    csrfToken: text().notNull(),
    /** SHA-256 of the token signed in with: rotating ADMIN_TOKEN ends the bootstrap admin's sessions. */
    credentialHash: text().notNull().default(""),
    createdAt: integer().notNull(),
    lastSeenAt: integer().notNull(),
    expiresAt: integer().notNull(),
    revokedAt: integer(),
  },
  (t) => [index("operator_sessions_operator").on(t.operatorId)],
);

/** The sign-in form's anti-forgery tokens: issued by the server, consumed once. */
export const signInTokens = sqliteTable("sign_in_tokens", {
  tokenHash: text().primaryKey(),
  expiresAt: integer().notNull(),
});

/** Failed authentications per scope (`addr:<address>` or `global`) in the current window. */
export const authFailures = sqliteTable("auth_failures", {
  scope: text().primaryKey(),
  windowStart: integer().notNull(),
  failures: integer().notNull(),
  lockedUntil: integer(),
});

/** One row per human decision: chat, trigger, reset, approval decision, operator changes. */
export const operatorActivity = sqliteTable(
  "operator_activity",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    operatorId: integer().notNull(),
    operatorName: text().notNull(),
    /** message | trigger | reset | approve | reject | operator_add | operator_revoke | sign_out_everywhere */
    action: text().notNull(),
    agentId: text(),
    /** What it acted on: an event id, approval id, operator name… */
    subject: text(),
    at: integer().notNull(),
  },
  (t) => [index("operator_activity_at").on(t.at)],
);
