/**
 * Carries out the action table's `approval` outcome (fleet/actions/decide.ts): a pending approval
 * saying who asked (llm, rules or an operator, on which run), what (kind, instance, label) and why.
 * The action row (awaiting_approval) and the approval are written in one batch keyed by the
 * action's idempotency key, so a repeated request neither duplicates the approval nor pages the
 * human twice. The provider is not called; decideApproval executes it once approved.
 *
 * Nothing is decided here except the approval bounds, which are decided in the filing statement
 * itself so concurrent callers cannot slip under them: past APPROVALS_PER_RUN or
 * APPROVALS_PER_HOUR the row is `refused` with its reason, no approval is filed, and a human is
 * told once per run. Also here: recording what files nothing (`blocked`, and a shadow proposal
 * of what would have asked a human).
 */
import { eq, sql } from "drizzle-orm";
import { actions, approvals } from "../../schema/index.ts";
import { notifyHuman, type NotifyDeps } from "../../notify/notify-human.ts";
import type { ActionRequest, ActionResult } from "./action-types.ts";
import { findAction, recordedResult, type ActionRow } from "./action-records.ts";
import { fencedWrite, FenceLostError } from "../../pipeline/index.ts";
import { insertWhere } from "../../db/insert-where.ts";
import { approvalBound, tellRefused } from "./bounds.ts";
import { approvalContext } from "./approval-context.ts";
import { askedMessage } from "./approval-messages.ts";

/** Records a request that files nothing (blocked, or proposed in shadow mode) in the audit. */
export async function recordUnfiled(
  deps: NotifyDeps,
  request: ActionRequest,
  outcome: { status: "blocked" | "proposed" | "refused"; error?: string; result: Record<string, unknown> },
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
  if (outcome.status === "refused") return { actionId: row.id, status: "refused", repeated: false, error: outcome.error ?? "refused" };
  return { actionId: row.id, status: "failed", repeated: false, ...(outcome.error !== undefined ? { error: outcome.error } : {}) };
}

/** The action row's columns that say what was requested, by whom, under which key, on what evidence. */
function requestedAction(request: ActionRequest) {
  const { agentId, runId, instanceId, kind, decidedBy, idempotencyKey } = request;
  const operator = request.operator ?? null;
  return {
    agentId,
    runId,
    instanceId,
    kind,
    decidedBy,
    idempotencyKey,
    evidence: request.evidence ?? null,
    model: request.model ?? null,
    operator,
  };
}

export async function requestApproval(deps: NotifyDeps, request: ActionRequest): Promise<ActionResult> {
  const { db, clock } = deps;
  const now = clock.now();
  const { agentId, idempotencyKey } = request;
  const what = request.rent
    ? rentWhat(request.rent)
    : `${request.kind} ${request.instanceId}${request.label ? ` (label ${request.label})` : ""}`;
  const why = request.reason?.trim() || `${request.decidedBy} decided to ${request.kind} it`;
  const mine = sql`agent_id = ${agentId} and idempotency_key = ${idempotencyKey}`;

  const bound = approvalBound(deps, request, now);
  // What the approver needs (GPU, $/h, state and since when), and when an undecided one expires.
  const context = await approvalContext(deps, agentId, request.instanceId);
  const expiresAt = now + deps.config.approvalExpiresMs;
  const askedByOperator = request.decidedBy === "human" ? (request.operator ?? null) : null;

  const filed = await fencedWrite(
    deps,
    request.fence,
    `an approval request to ${what}`,
    async (
      holds,
    ): Promise<
      { actionId: number; approvalId: number } | { refused: { id: number; error: string } } | { recorded: ActionRow } | undefined
    > => {
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
            // A rental's spec likewise: the approved execution rents what was asked.
            result: request.label !== undefined ? { label: request.label } : request.rent ? { rent: request.rent } : null,
            createdAt: now,
          },
          holds,
        )
          .onConflictDoNothing()
          .returning({ id: actions.id, status: actions.status, error: actions.error }),
        db.all<{
          id: number;
        }>(sql`insert into ${approvals} (agent_id, run_id, kind, instance_id, reason, requested_by, requested_by_operator, context, expires_at, status, action_id, created_at)
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
    await deps.db
      .update(actions)
      .set({ result: { providerCalled: false }, finishedAt: now })
      .where(eq(actions.id, id));
    await tellRefused(deps, request, "approvals", error);
    return { actionId: id, status: "refused", repeated: false, error };
  }
  const { actionId, approvalId } = filed;
  deps.log.info("approval requested", {
    agentId,
    approvalId,
    runId: request.runId,
    kind: request.kind,
    instanceId: request.instanceId,
    requestedBy: request.decidedBy,
  });

  try {
    const row = {
      id: approvalId,
      agentId,
      runId: request.runId,
      kind: request.kind,
      instanceId: request.instanceId,
      reason: why,
      requestedBy: request.decidedBy,
    };
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

/** A rental in words, for the approver. */
function rentWhat(rent: NonNullable<ActionRequest["rent"]>): string {
  return `rent ${rent.gpuCount}× ${rent.gpuName} at most $${rent.maxPricePerHour}/h for ${rent.owner}${rent.client ? ` (via ${rent.client})` : ""}, lease ${rent.leaseSeconds} s: ${rent.purpose}`;
}
