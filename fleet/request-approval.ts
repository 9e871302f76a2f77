/**
 * Turns an action that needs a human (destroy by default, APPROVAL_REQUIRED_ACTIONS) into a
 * pending approval: who asked (llm or rules, on which run), what (kind, instance, label) and
 * why. The action row (awaiting_approval) and the approval are written in one batch keyed by the
 * action's idempotency key, so a repeated request neither duplicates the approval nor pages the
 * human twice. The provider is not called; decideApproval executes it once approved.
 */
import { sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { actions, approvals } from "../schema/index.ts";
import { notifyHuman } from "../notify/notify-human.ts";
import type { ActionRequest, ActionResult } from "./actions.ts";
import { findAction, recordedResult } from "./action-records.ts";

export async function requestApproval(deps: Deps, request: ActionRequest): Promise<ActionResult> {
  const { db, clock } = deps;
  const now = clock.now();
  const { agentId, idempotencyKey } = request;
  const what = `${request.kind} ${request.instanceId}${request.label ? ` (label ${request.label})` : ""}`;
  const why = request.reason?.trim() || `${request.decidedBy} decided to ${request.kind} it`;
  const mine = sql`agent_id = ${agentId} and idempotency_key = ${idempotencyKey}`;

  const [inserted, approval] = await db.batch([
    db
      .insert(actions)
      .values({
        agentId,
        runId: request.runId,
        instanceId: request.instanceId,
        kind: request.kind,
        decidedBy: request.decidedBy,
        idempotencyKey,
        status: "awaiting_approval",
        reason: why,
        // The label is part of "what"; kept so the approved execution can apply it.
        result: request.label !== undefined ? { label: request.label } : null,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: actions.id }),
    db.all<{ id: number }>(sql`insert into ${approvals} (agent_id, run_id, kind, instance_id, reason, requested_by, status, action_id, created_at)
      select ${agentId}, ${request.runId}, ${request.kind}, ${request.instanceId}, ${why}, ${request.decidedBy}, 'pending', a.id, ${now}
      from ${actions} a where a.agent_id = ${agentId} and a.idempotency_key = ${idempotencyKey}
        and a.status = 'awaiting_approval' and a.approval_id is null
      returning id`),
    db.run(sql`update ${actions} set approval_id = (select max(p.id) from ${approvals} p where p.action_id = ${actions}.id)
      where ${mine} and status = 'awaiting_approval' and approval_id is null`),
  ]);
  const actionId = inserted[0]?.id;
  if (actionId === undefined) return recordedResult(deps, (await findAction(deps, agentId, idempotencyKey))!);
  const approvalId = approval[0]!.id;
  deps.log.info("approval requested", { agentId, approvalId, runId: request.runId, kind: request.kind, instanceId: request.instanceId, requestedBy: request.decidedBy });

  try {
    await notifyHuman(deps, {
      agentId,
      runId: request.runId,
      title: `Approval needed: ${what}`,
      body: `Requested by ${request.decidedBy}${request.runId !== null ? ` in run ${request.runId}` : ""}.\nWhy: ${why}\nDecide at ${(deps.config.publicUrl ?? "").replace(/\/$/, "")}/approvals#approval-${approvalId}`,
      severity: "warning",
      dedupKey: `approval:${approvalId}`,
    });
  } catch (err) {
    // The approval is stored and listed; a failed page must not undo it.
    deps.log.error("could not notify about an approval", { agentId, approvalId, error: String(err) });
  }
  return { actionId, status: "awaiting_approval", repeated: false, approvalId };
}
