/**
 * An operator's own action on an instance: the one function behind the API's
 * POST /api/agents/:agent/instances/:id/actions and the instance page's action form. It asks
 * executeAction as an operator's own request (the action table files an approval for a kind in
 * APPROVAL_REQUIRED_ACTIONS or APPROVAL_TWO_PERSON, in shadow mode too), then names the operator
 * on what it wrote: the action
 * record's `operator`, the approval's `requested_by`, and one operator_activity row, in one batch.
 * The idempotency key bounds it: a repeated key returns the recorded result and writes nothing.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Deps } from "./deps.ts";
import { RequestError } from "./errors.ts";
import { activityInsert } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { executeAction } from "../fleet/actions/actions.ts";
import type { ActionKind, ActionResult } from "../fleet/actions/action-types.ts";
import { actions, approvals } from "../schema/index.ts";

export interface OperatorActionInput {
  agentId: string;
  instanceId: string;
  kind: ActionKind;
  label?: string;
  note?: string;
  idempotencyKey: string;
  /** Where it came from, for the record's reason when no note was given. */
  via: "api" | "dashboard";
}

export async function operatorInstanceAction(deps: Deps, who: Principal, input: OperatorActionInput): Promise<ActionResult> {
  if (input.kind === "label" && !input.label) throw new RequestError(400, "invalid body: label: a label action needs a label");
  if (!(await deps.provider.get(input.instanceId))) throw new RequestError(404, `unknown instance: ${input.instanceId}`);
  const request = {
    agentId: input.agentId,
    runId: null,
    instanceId: input.instanceId,
    kind: input.kind,
    ...(input.label ? { label: input.label } : {}),
    decidedBy: "human" as const,
    idempotencyKey: input.idempotencyKey,
    reason: input.note?.trim() || `operator action from the ${input.via} by ${who.name}`,
    operator: who.name,
  };
  const result = await executeAction(deps, request);
  if (result.repeated || !result.actionId) return result;
  const { db } = deps;
  await db.batch([
    db
      .update(actions)
      .set({ operator: who.name })
      .where(and(eq(actions.id, result.actionId), isNull(actions.operator))),
    db
      .update(approvals)
      .set({ requestedBy: who.name })
      .where(and(eq(approvals.actionId, result.actionId), eq(approvals.requestedBy, "human"))),
    activityInsert(db, who, {
      action: "instance_action",
      agentId: input.agentId,
      subject: `${input.kind} ${input.instanceId} #${result.actionId}`,
      at: deps.clock.now(),
    }),
  ]);
  return result;
}
