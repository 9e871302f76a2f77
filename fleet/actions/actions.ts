/**
 * executeAction: the one way anything (the agent's tools, the rules policy, the economics check,
 * a replacement step, an operator, an approval carried out from the API, dashboard or Slack) acts
 * on an instance or asks a human to, and the audit of every attempt. Callers say what they know
 * (who decided, the evidence, why a human should decide); the action table decides
 * (fleet/actions/decide.ts, over the facts of fleet/actions/action-facts.ts) and the outcome is
 * carried out (fleet/actions/carry-out.ts). Nobody chooses between acting and asking.
 *
 * An idempotency key makes a repeat return the recorded result without calling the provider
 * again; every record carries its evidence and, for the LLM, the model that decided it.
 */
import { desc, eq } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions } from "../../schema/index.ts";
import { iso } from "../../runtime/time.ts";
import { gatherFacts } from "./action-facts.ts";
import { carryOut, type ActionDeps } from "./carry-out.ts";
import { decideAction, humanNeeded } from "./decide.ts";
import type { ActionEvidence, ActionRequest, ActionResult } from "./action-types.ts";

export type { ActionDeps } from "./carry-out.ts";

export async function executeAction(deps: ActionDeps, request: ActionRequest): Promise<ActionResult> {
  const gathered = await gatherFacts(deps, request);
  const decision = decideAction(gathered.facts);
  return carryOut(deps, request, decision, gathered);
}

/** Whether the approval list alone asks a human about this decider's kind (the table's rule, read without the other facts). */
export function needsApproval(deps: Pick<FleetDeps, "config">, request: Pick<ActionRequest, "kind" | "decidedBy">): boolean {
  return humanNeeded({
    kind: request.kind,
    decidedBy: request.decidedBy,
    approvedByHuman: false,
    operatorAsks: false,
    shadow: false,
    providerCannot: false,
    recorded: false,
    pendingApproval: false,
    rejected: false,
    approvalListed: deps.config.approvalRequired.includes(request.kind),
    twoPerson: false,
    overSpendLimit: false,
    addsSpend: false,
    fleetBreakerOpen: false,
    callerAsks: null,
  }).includes("approval list");
}

export function presentAction(row: typeof actions.$inferSelect) {
  return {
    id: row.id,
    runId: row.runId,
    instanceId: row.instanceId,
    kind: row.kind,
    decidedBy: row.decidedBy,
    /** The operator whose approval ran it (decidedBy human). */
    operator: row.operator,
    idempotencyKey: row.idempotencyKey,
    status: row.status,
    reason: row.reason,
    /** What justified it ({eventIds, wakeIds, humanMessage?}), and the model when the LLM decided. */
    evidence: row.evidence as ActionEvidence | null,
    model: row.model,
    /** Who decided, as shown: "rules", the model's name, or the operator. */
    decider: row.decidedBy === "llm" ? (row.model ?? "llm") : row.decidedBy === "human" ? (row.operator ?? "human") : row.decidedBy,
    result: row.result,
    error: row.error,
    approvalId: row.approvalId,
    createdAt: iso(row.createdAt),
    finishedAt: iso(row.finishedAt),
  };
}

/** The audit, newest first. */
export async function listActions(deps: Pick<FleetDeps, "db">, agentId: string, limit = 50) {
  const rows = await deps.db.select().from(actions).where(eq(actions.agentId, agentId)).orderBy(desc(actions.id)).limit(limit);
  return rows.map(presentAction);
}
