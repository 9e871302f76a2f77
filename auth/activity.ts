/**
 * The operator activity log: one row per human decision (chat message, trigger, reset, approval
 * decision, operator added or revoked, sign out everywhere), naming the operator. The rows the decision itself wrote (event payload, approval,
 * action) name the operator too; this log is the one place to read them all, newest first.
 */
import { desc, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { bind, prepareRaw, preparedPerDb } from "../db/prepared.ts";
import { operatorActivity } from "../schema/index.ts";
import type { Principal } from "./roles.ts";

export type ActivityKind =
  | "message"
  | "trigger"
  | "reset"
  | "approve"
  | "reject"
  | "operator_change"
  | "lift_block"
  /** A replacement cancelled before it rented (subject: "replacement #id of instance"). */
  | "replacement_cancel"
  | "operator_add"
  | "operator_revoke"
  | "sign_out_everywhere"
  | "agent_create"
  | "agent_update"
  | "agent_archive"
  /** Shadow mode switched on or off (subject: the new mode). */
  | "mode"
  /** A memory fact deleted by an operator (subject: its key). */
  | "memory_delete"
  /** An operator's own action on an instance, from the API or the instance page (subject: "kind instance #actionId"). */
  | "instance_action"
  /** An archived agent restored (subject: its id). */
  | "agent_restore"
  /** An agent's webhook secret rotated (subject: its id; the secret is never recorded). */
  | "webhook_secret_rotate"
  /** A human lifted the fleet breaker's hold for its open episode (subject: "episode #id"). */
  | "fleet_breaker_lift"
  /** A write tool called through the MCP server (subject: "tool instance #actionId via <client>"). */
  | "mcp_action"
  /** An instance's reporter key revealed to an operator (subject: the instance id; the key is never recorded). */
  | "reporter_key";

export async function recordActivity(db: Db, who: Principal, entry: ActivityEntry): Promise<void> {
  await activityInsert(db, who, entry);
}

type ActivityEntry = { action: ActivityKind; agentId?: string | null; subject?: string | number | null; at: number };

/** The insert of one activity row, unawaited, for a caller that writes it in its own batch. */
export function activityInsert(db: Db, who: Principal, entry: ActivityEntry) {
  return db.insert(operatorActivity).values({
    operatorId: who.operatorId,
    operatorName: who.name,
    action: entry.action,
    agentId: entry.agentId ?? null,
    subject: entry.subject === undefined || entry.subject === null ? null : String(entry.subject),
    at: entry.at,
  });
}

const p = (name: string) => sql.placeholder(name);

/** The activity row of an inbox event, run after that event's insert with no other write between (changes() and last_insert_rowid() name it). */
const activityAfterInsert = preparedPerDb((db) =>
  prepareRaw(
    db,
    db.run(sql`insert into ${operatorActivity} (operator_id, operator_name, action, agent_id, subject, at)
      select ${p("operatorId")}, ${p("operatorName")}, ${p("action")}, ${p("agentId")}, cast(last_insert_rowid() as text), ${p("at")}
      where changes() = 1`),
  ),
);

/**
 * The activity row of a human's inbox event (chat message, manual trigger), as a statement of the
 * event's own ingest batch (pipeline/ingest.ts `afterInsert`): written exactly once, when the
 * event is stored, with the event's id as subject; a repeated idempotency key writes neither.
 */
export function activityOfIngest(db: Db, who: Principal, entry: { action: "message" | "trigger"; agentId: string; at: number }) {
  return bind(activityAfterInsert(db), {
    operatorId: who.operatorId,
    operatorName: who.name,
    action: entry.action,
    agentId: entry.agentId,
    at: entry.at,
  });
}

export async function listActivity(db: Db, limit = 100) {
  const rows = await db.select().from(operatorActivity).orderBy(desc(operatorActivity.id)).limit(limit);
  return rows.map((r) => ({
    id: r.id,
    operator: r.operatorName,
    operatorId: r.operatorId,
    action: r.action,
    agentId: r.agentId,
    subject: r.subject,
    at: new Date(r.at).toISOString(),
  }));
}
