/**
 * Human approvals of destructive actions: listing them, and deciding one. A decision is taken
 * once (an atomic pending → approved|rejected update; the opposite decision later is a 409).
 * Approving executes the action through executeAction as `human` with a key derived from the
 * approval, so it runs at most once whatever is repeated. Either way the decision becomes an
 * inbox event, so the agent learns of it on its next run. Repeating the same decision is safe
 * and finishes whatever a crash interrupted after the decision was stored: every step after it is
 * idempotent. A rejection also blocks the same action on the same instance for a cooldown, and an
 * approval lifts such blocks (fleet/actions/action-blocks.ts).
 */
import { and, desc, eq, gt, inArray, isNull, or } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions, approvals, events } from "../../schema/index.ts";
import { iso } from "../../runtime/time.ts";
import { RequestError } from "../../runtime/errors.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { approvalActionKey } from "./action-records.ts";
import { liftBlocksFor, recordRejection } from "./action-blocks.ts";
import { executeAction } from "./actions.ts";
import type { ActionEvidence, ActionKind, ActionResult, RentSpec } from "./action-types.ts";
import { tellDecidedOnce } from "./approval-told.ts";

export const APPROVAL_STATUSES = ["pending", "approved", "rejected", "expired"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export type Decision = "approve" | "reject";

/**
 * An expected failure of a decision, the caller's to fix (an unknown approval, one already
 * decided): a RequestError, so the API and the dashboard answer it with this status.
 */
export class ApprovalError extends RequestError {
  constructor(status: 403 | 404 | 409, message: string) {
    super(status, message);
    this.name = "ApprovalError";
  }
}

type ApprovalRow = typeof approvals.$inferSelect;
type Execution = { actionId: number; status: string; error: string | null } | null;

export function presentApproval(row: ApprovalRow, execution: Execution = null) {
  return {
    id: row.id,
    runId: row.runId,
    requestedBy: row.requestedBy,
    kind: row.kind,
    instanceId: row.instanceId,
    reason: row.reason,
    status: row.status,
    /** The operator who asked for it, when a human did. */
    requestedByOperator: row.requestedByOperator,
    /** The instance as it was when asked (fleet/actions/approval-context.ts). */
    context: row.context,
    expiresAt: iso(row.expiresAt),
    remindedAt: iso(row.remindedAt),
    /** The operator who decided it. */
    decidedBy: row.decidedBy,
    note: row.note,
    actionId: row.actionId,
    /** The action a human approval executed, once it has. */
    execution,
    createdAt: iso(row.createdAt),
    decidedAt: iso(row.decidedAt),
  };
}

export async function listApprovals(deps: Pick<FleetDeps, "db">, agentId: string, status?: string, limit = 100) {
  const rows = await deps.db
    .select()
    .from(approvals)
    .where(and(eq(approvals.agentId, agentId), status ? eq(approvals.status, status) : undefined))
    .orderBy(desc(approvals.id))
    .limit(limit);
  if (rows.length === 0) return [];
  const executed = await deps.db
    .select()
    .from(actions)
    .where(
      and(
        eq(actions.agentId, agentId),
        inArray(
          actions.idempotencyKey,
          rows.map((r) => approvalActionKey(r.id)),
        ),
      ),
    );
  return rows.map((row) => {
    const action = executed.find((a) => a.idempotencyKey === approvalActionKey(row.id));
    return presentApproval(row, action ? { actionId: action.id, status: action.status, error: action.error } : null);
  });
}

export async function decideApproval(
  deps: FleetDeps,
  agentId: string,
  approvalId: number,
  decision: Decision,
  note?: string,
  /** The operator deciding, recorded on the approval, the action it runs, the event and any block. */
  operator?: string,
): Promise<{ approval: ReturnType<typeof presentApproval>; action?: ActionResult }> {
  const { db, clock } = deps;
  const by = operator ?? "a human";
  const mine = and(eq(approvals.id, approvalId), eq(approvals.agentId, agentId));
  const status = decision === "approve" ? "approved" : "rejected";
  const now = clock.now();
  if (decision === "approve" && deps.config.approvalTwoPerson.length > 0) await refuseOwnApproval(deps, mine, approvalId, operator);
  // Past its expiry an approval does nothing, even before the tick marks it expired.
  const unexpired = or(isNull(approvals.expiresAt), gt(approvals.expiresAt, now));
  let [decided] = await db
    .update(approvals)
    .set({ status, decidedAt: now, note: note ?? null, decidedBy: operator ?? null })
    .where(and(mine, eq(approvals.status, "pending"), unexpired))
    .returning();
  if (!decided) {
    const [existing] = await db.select().from(approvals).where(mine);
    if (!existing) throw new ApprovalError(404, `unknown approval: ${approvalId}`);
    if (existing.status === "expired" || (existing.status === "pending" && existing.expiresAt !== null)) {
      throw new ApprovalError(
        409,
        `approval ${approvalId} expired at ${iso(existing.expiresAt)} and did nothing; ask again if it is still needed`,
      );
    }
    if (existing.status !== status) throw new ApprovalError(409, `approval ${approvalId} is already ${existing.status}`);
    decided = existing; // the same decision again: complete what may have been interrupted
  }
  deps.log.info("approval decided", { agentId, approvalId, decision, kind: decided.kind, instanceId: decided.instanceId });

  const [requested] = decided.actionId !== null ? await db.select().from(actions).where(eq(actions.id, decided.actionId)) : [];
  // An orphan's stop acts through the whole account, as the sweep asked (fleet/leases/orphans.ts).
  const account = (requested?.result as { account?: unknown } | null)?.account === true;
  let action: ActionResult | undefined;
  if (decision === "reject") await recordRejection(deps, decided, by);
  else if (decided.instanceId)
    await liftBlocksFor(deps, agentId, decided.instanceId, decided.kind, `${by} (approved request ${approvalId})`);
  if (decision === "approve") {
    const label = (requested?.result as { label?: unknown } | null)?.label;
    const rent = (requested?.result as { rent?: RentSpec } | null)?.rent;
    action = await executeAction(deps, {
      agentId,
      runId: decided.runId,
      instanceId: decided.instanceId ?? "",
      kind: decided.kind as ActionKind,
      ...(typeof label === "string" ? { label } : {}),
      ...(rent ? { rent } : {}),
      decidedBy: "human",
      idempotencyKey: approvalActionKey(approvalId),
      reason: note ? `approved: ${note}` : `approved: ${decided.reason}`,
      approvalId,
      ...(account ? { account: true as const } : {}),
    });
    if (operator) await db.update(actions).set({ operator }).where(eq(actions.id, action.actionId));
  }
  if (requested) {
    await db
      .update(actions)
      .set({
        status: decision === "approve" ? "approved" : "rejected",
        error: decision === "reject" ? `rejected by a human${note ? `: ${note}` : ""}` : null,
        finishedAt: clock.now(),
      })
      .where(and(eq(actions.id, requested.id), eq(actions.status, "awaiting_approval")));
  }

  await ingestEvent(deps, {
    agentId,
    source: "approval",
    priority: 0,
    dedupKey: `approval:${approvalId}`,
    payload: {
      approvalId,
      decision,
      operator: operator ?? null,
      note: note ?? null,
      kind: decided.kind,
      instanceId: decided.instanceId,
      reason: decided.reason,
      action: action ? { actionId: action.actionId, status: action.status, error: action.error ?? null } : null,
    },
  });
  // Who decided reaches a human once, whichever path decided (API, dashboard, Slack).
  await tellDecidedOnce(deps, decided);
  const execution = action ? { actionId: action.actionId, status: action.status, error: action.error ?? null } : null;
  return { approval: presentApproval(decided, execution), ...(action ? { action } : {}) };
}

/**
 * APPROVAL_TWO_PERSON: for those kinds, the operator who asked cannot approve their own request
 * (another operator must; rejecting it stays allowed). Who asked includes a human who asked through
 * chat: a request the model filed while answering her message is hers, or one person could ask
 * the agent to destroy and then approve the model's request herself.
 */
async function refuseOwnApproval(
  deps: Pick<FleetDeps, "db" | "config">,
  mine: ReturnType<typeof and>,
  approvalId: number,
  operator: string | undefined,
) {
  const [row] = await deps.db
    .select({ kind: approvals.kind, asker: approvals.requestedByOperator, runId: approvals.runId, actionId: approvals.actionId })
    .from(approvals)
    .where(mine);
  if (!row || !deps.config.approvalTwoPerson.includes(row.kind)) return;
  const askers = row.asker !== null ? [row.asker] : await chatAskers(deps, row);
  if (askers.length === 0) return;
  if (operator === undefined || askers.includes(operator)) {
    const who = askers.join(", ");
    const how = row.asker !== null ? "asked for it" : "asked for it in chat (the agent's request answers that message)";
    throw new ApprovalError(
      403,
      `approval ${approvalId}: ${row.kind} needs a second person (APPROVAL_TWO_PERSON): ${who} ${how} and cannot approve it; another operator must`,
    );
  }
}

/**
 * The operators whose chat caused a request the agent filed: the human message its evidence names,
 * else every operator's message or trigger the deciding run consumed.
 */
async function chatAskers(deps: Pick<FleetDeps, "db">, row: { runId: number | null; actionId: number | null }): Promise<string[]> {
  const [action] =
    row.actionId !== null
      ? await deps.db.select({ evidence: actions.evidence, agentId: actions.agentId }).from(actions).where(eq(actions.id, row.actionId))
      : [];
  const message = (action?.evidence as ActionEvidence | null | undefined)?.humanMessage;
  const said = message
    ? await deps.db.select({ payload: events.payload }).from(events).where(eq(events.id, message.eventId))
    : row.runId !== null && action
      ? await deps.db
          .select({ payload: events.payload })
          .from(events)
          .where(and(eq(events.agentId, action.agentId), eq(events.runId, row.runId), inArray(events.source, ["human", "manual"])))
      : [];
  const operators = said
    .map((e) => (e.payload as { operator?: unknown } | null)?.operator)
    .filter((o): o is string => typeof o === "string");
  return [...new Set(operators)];
}
