/**
 * The operator activity log: one row per human decision (chat message, trigger, reset, approval
 * decision, operator added or revoked, sign out everywhere), naming the operator. The rows the decision itself wrote (event payload, approval,
 * action) name the operator too; this log is the one place to read them all, newest first.
 */
import { desc } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { operatorActivity } from "../../schema/index.ts";
import type { Principal } from "./roles.ts";

export type ActivityKind =
  | "message"
  | "trigger"
  | "reset"
  | "approve"
  | "reject"
  | "lift_block"
  | "operator_add"
  | "operator_revoke"
  | "sign_out_everywhere"
  | "agent_create"
  | "agent_update"
  | "agent_archive";

export async function recordActivity(
  db: Db,
  who: Principal,
  entry: { action: ActivityKind; agentId?: string | null; subject?: string | number | null; at: number },
): Promise<void> {
  await db.insert(operatorActivity).values({
    operatorId: who.operatorId,
    operatorName: who.name,
    action: entry.action,
    agentId: entry.agentId ?? null,
    subject: entry.subject === undefined || entry.subject === null ? null : String(entry.subject),
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
