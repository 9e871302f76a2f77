/**
 * Turns an action that needs a human (destroy by default, APPROVAL_REQUIRED_ACTIONS) into a
 * pending approval: who asked (llm or rules, on which run), what (kind, instance, label) and
 * why. The action row (awaiting_approval) and the approval are written in one batch keyed by the
 * action's idempotency key, so a repeated request neither duplicates the approval nor pages the
 * human twice. The provider is not called; decideApproval executes it once approved.
 *
 * Two refusals come first (invariant 12): while a request for the same action on the same
 * instance is pending, the pending one is the answer (nothing filed, nobody paged again); and
 * while a human's rejection of it is active (fleet/actions/action-blocks.ts), the request is recorded as
 * `blocked` and refused, saying who rejected it and when, unless the run answers a human message
 * (a human asked again).
 *
 * Then shadow mode records the request as `proposed` (nothing filed, nobody paged), and the
 * approval bounds (fleet/actions/bounds.ts) decide in the filing statement itself: past APPROVALS_PER_RUN
 * or APPROVALS_PER_HOUR the row is `refused` with its reason, no approval is filed, and a human
 * is told once per run.
 */
import { and, eq, sql } from "drizzle-orm";
import { actions, approvals } from "../../schema/index.ts";
import { notifyHuman, type NotifyDeps } from "../../notify/notify-human.ts";
import type { ActionRequest, ActionResult } from "./action-types.ts";
import { findAction, recordedResult, type ActionRow } from "./action-records.ts";
import { fencedWrite, FenceLostError } from "../../pipeline/index.ts";
import { insertWhere } from "../../db/insert-where.ts";
import { blockingRejection, describeBlock } from "./action-blocks.ts";
import { approvalBound, tellRefused } from "./bounds.ts";
import { approvalContext } from "./approval-context.ts";
import { askedMessage } from "./approval-messages.ts";

/** The pending approval for this action on this instance, if one is waiting for a human. */
async function pendingFor(deps: NotifyDeps, request: ActionRequest) {
  const [row] = await deps.db
    .select()
    .from(approvals)
    .where(
      and(
        eq(approvals.agentId, request.agentId),
        eq(approvals.instanceId, request.instanceId),
        eq(approvals.kind, request.kind),
        eq(approvals.status, "pending"),
      ),
    )
    .limit(1);
  return row;
}

/** Records a request that files nothing (blocked, or proposed in shadow mode) in the audit. */
async function recordUnfiled(
  deps: NotifyDeps,
  request: ActionRequest,
  outcome: { status: "blocked" | "proposed"; error?: string; result: Record<string, unknown> },
): Promise<ActionResult> {
  const now = deps.clock.now();
  const [row] = await fencedWrite(deps, request.fence, `recording a ${outcome.status} request`, (holds) =>
    insertWhere(
      deps.db,
      actions,
      {
        ...requestedAction(request),
        status: outcome.status,
        reason: request.reason ?? null,
        result: outcome.result,
        error: outcome.error ?? null,
        createdAt: now,
        finishedAt: now,
      },
      holds,
    )
      .onConflictDoNothing()
      .returning({ id: actions.id }),
  );
  if (!row) return recordedResult(deps, (await findAction(deps, request.agentId, request.idempotencyKey))!);
  if (outcome.status === "proposed") return { actionId: row.id, status: "proposed", repeated: false };
  return { actionId: row.id, status: "failed", repeated: false, ...(outcome.error !== undefined ? { error: outcome.error } : {}) };
}

/** The action row's columns that say what was requested, by whom, under which key, on what evidence. */
function requestedAction(request: ActionRequest) {
  const { agentId, runId, instanceId, kind, decidedBy, idempotencyKey } = request;
  return { agentId, runId, instanceId, kind, decidedBy, idempotencyKey, evidence: request.evidence ?? null, model: request.model ?? null };
}

export async function requestApproval(deps: NotifyDeps, request: ActionRequest): Promise<ActionResult> {
  const { db, clock } = deps;
  const now = clock.now();
  const { agentId, idempotencyKey } = request;
  const what = `${request.kind} ${request.instanceId}${request.label ? ` (label ${request.label})` : ""}`;
  const why = request.reason?.trim() || `${request.decidedBy} decided to ${request.kind} it`;
  const mine = sql`agent_id = ${agentId} and idempotency_key = ${idempotencyKey}`;

  const known = await findAction(deps, agentId, idempotencyKey);
  if (known) return recordedResult(deps, known);
  const waiting = await pendingFor(deps, request);
  if (waiting) return { actionId: waiting.actionId ?? 0, status: "awaiting_approval", repeated: true, approvalId: waiting.id };
  const block = await blockingRejection(deps, request);
  if (block) {
    const error = `blocked: ${describeBlock(block)}. Do not ask again unless a human asks for it.`;
    return recordUnfiled(deps, request, { status: "blocked", error, result: { providerCalled: false } });
  }
  if (deps.config.mode === "shadow") {
    return recordUnfiled(deps, request, { status: "proposed", result: { providerCalled: false, shadow: true, approvalRequested: false } });
  }
  const bound = approvalBound(deps, request, now);
  // What the approver needs (GPU, $/h, state and since when), and when an undecided one expires.
  const context = await approvalContext(deps, agentId, request.instanceId);
  const expiresAt = now + deps.config.approvalExpiresMs;
  const askedByOperator = request.decidedBy === "human" ? (request.operator ?? null) : null;

  const filed = await fencedWrite(
    deps,
    request.fence,
    `an approval request to ${what}`,
    async (holds): Promise<{ actionId: number; approvalId: number } | { refused: { id: number; error: string } } | { recorded: ActionRow } | undefined> => {
      const [inserted, approval] = await db.batch([
        // The label is part of "what"; kept in result so the approved execution can apply it.
        insertWhere(
          db,
          actions,
          {
            ...requestedAction(request),
            status: bound.status,
            error: bound.error,
            reason: why,
            result: request.label !== undefined ? { label: request.label } : null,
            createdAt: now,
          },
          holds,
        )
          .onConflictDoNothing()
          .returning({ id: actions.id, status: actions.status, error: actions.error }),
        db.all<{ id: number }>(sql`insert into ${approvals} (agent_id, run_id, kind, instance_id, reason, requested_by, requested_by_operator, context, expires_at, status, action_id, created_at)
          select ${agentId}, ${request.runId}, ${request.kind}, ${request.instanceId}, ${why}, ${request.decidedBy}, ${askedByOperator}, ${JSON.stringify(context)}, ${expiresAt}, 'pending', a.id, ${now}
          from ${actions} a where a.agent_id = ${agentId} and a.idempotency_key = ${idempotencyKey}
            and a.status = 'awaiting_approval' and a.approval_id is null
          returning id`),
        db.run(sql`update ${actions} set approval_id = (select max(p.id) from ${approvals} p where p.action_id = ${actions}.id)
          where ${mine} and status = 'awaiting_approval' and approval_id is null`),
      ]);
      if (inserted[0]?.status === "refused") return { refused: { id: inserted[0].id, error: inserted[0].error ?? "refused by a bound" } };
      if (inserted[0]) return { actionId: inserted[0].id, approvalId: approval[0]!.id };
      // A request already recorded answers a repeat, even from a run past its lease.
      const recorded = await findAction(deps, agentId, idempotencyKey);
      return recorded ? { recorded } : undefined;
    },
    (filed) => filed !== undefined,
  );
  if (!filed) throw new Error(`approval request ${idempotencyKey} was neither recorded nor found`);
  if ("recorded" in filed) return recordedResult(deps, filed.recorded);
  if ("refused" in filed) {
    const { id, error } = filed.refused;
    await deps.db.update(actions).set({ result: { providerCalled: false }, finishedAt: now }).where(eq(actions.id, id));
    await tellRefused(deps, request, "approvals", error);
    return { actionId: id, status: "refused", repeated: false, error };
  }
  const { actionId, approvalId } = filed;
  deps.log.info("approval requested", { agentId, approvalId, runId: request.runId, kind: request.kind, instanceId: request.instanceId, requestedBy: request.decidedBy });

  try {
    const row = { id: approvalId, agentId, runId: request.runId, kind: request.kind, instanceId: request.instanceId, reason: why, requestedBy: request.decidedBy };
    const message = askedMessage(deps.config, { ...row, requestedByOperator: askedByOperator, context, expiresAt, createdAt: now }, now);
    await notifyHuman(deps, {
      agentId,
      runId: request.runId,
      ...message,
      approvalId,
      severity: "warning",
      dedupKey: `approval:${approvalId}`,
      fence: request.fence,
      instanceId: request.instanceId,
      // Bounded as an approval request already: the page for a filed approval is never refused.
      bounded: false,
    });
  } catch (err) {
    if (err instanceof FenceLostError) throw err;
    // The approval is stored and listed; a failed page must not undo it.
    deps.log.error("could not notify about an approval", { agentId, approvalId, error: String(err) });
  }
  return { actionId, status: "awaiting_approval", repeated: false, approvalId };
}
