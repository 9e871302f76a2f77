/**
 * The actions table as the audit of every provider action: the atomic claim of an idempotency
 * key (with the per-instance rate limit decided in the same statement), the answer a repeated
 * key gets, and how a successful action updates fleetwarden's view of the instance.
 */
import { and, eq, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { HOUR_MS } from "../../runtime/time.ts";
import { actions, instanceEvents, instances } from "../../schema/index.ts";
import type { ActionKind, ActionRequest, ActionResult } from "./action-types.ts";
import type { InstanceState } from "../providers/provider.ts";
import { fencedWrite } from "../../pipeline/index.ts";
import { insertWhere } from "../../db/insert-where.ts";
import { expectationAfter } from "../instances/expectations.ts";
import { actionBound, reachedProvider } from "./bounds.ts";

export type ActionRow = typeof actions.$inferSelect;

/** What a successful action implies about the instance until the provider next reports. */
export const IMPLIED_STATE: Record<ActionKind, InstanceState | null> = {
  start: "running",
  stop: "stopped",
  reboot: "rebooting",
  destroy: "offline",
  label: null,
  // The old instance's state does not change when a replacement starts (fleet/replacement*.ts).
  replace: null,
  // A rental's instance is new: the listing brings it in (fleet/actions/rent.ts).
  rent: null,
};

/** What claiming an idempotency key came to: the new action row, or the action recorded for the key. */
export type ActionClaim = { claimed: { id: number; status: string; error: string | null } } | { recorded: ActionRow };

/**
 * Inserts the action for a new idempotency key as `pending`, or as `rate_limited` when the
 * instance already had its quota of provider calls in the last hour (human approvals are exempt:
 * a person decided). One statement, so two concurrent callers cannot both slip under the limit or
 * both claim the key. A key already used answers with its record, even to a run past its lease (a
 * repeat acts on nothing); otherwise a run past its lease records nothing and FenceLostError ends it.
 * The run and hour bounds (fleet/actions/bounds.ts) are decided in the same statement: `refused` with its
 * reason. In shadow mode the claim is `proposed` (go) instead of `pending`: recorded, never sent.
 */
export async function claimAction(
  deps: Pick<FleetDeps, "db" | "clock" | "config">,
  request: ActionRequest,
  go: "pending" | "proposed" = "pending",
): Promise<ActionClaim> {
  const { db } = deps;
  const now = deps.clock.now();
  const exempt = request.decidedBy === "human" ? 1 : 0;
  const calls = sql`(select count(*) from ${actions}
    where ${actions.agentId} = ${request.agentId} and ${actions.instanceId} = ${request.instanceId} and ${actions.createdAt} > ${now - HOUR_MS}
      and ${reachedProvider})`;
  const bound = actionBound(deps, request, now, sql`${go}`);
  const claim = await fencedWrite(
    deps,
    request.fence,
    `${request.kind} ${request.instanceId}`,
    async (holds): Promise<ActionClaim | undefined> => {
      const [claimed] = await insertWhere(
        db,
        actions,
        {
          agentId: request.agentId,
          runId: request.runId,
          instanceId: request.instanceId,
          kind: request.kind,
          decidedBy: request.decidedBy,
          idempotencyKey: request.idempotencyKey,
          status: sql`case when ${exempt} = 0 and ${calls} >= ${deps.config.actionRateLimitPerHour} then 'rate_limited' else ${bound.status} end`,
          error: sql`case when ${exempt} = 0 and ${calls} >= ${deps.config.actionRateLimitPerHour} then null else ${bound.error} end`,
          result: go === "proposed" ? { providerCalled: false, shadow: true } : null,
          reason: request.reason ?? null,
          evidence: request.evidence ?? null,
          model: request.model ?? null,
          approvalId: request.approvalId ?? null,
          operator: request.operator ?? null,
          createdAt: now,
        },
        holds,
      )
        .onConflictDoNothing()
        .returning({ id: actions.id, status: actions.status, error: actions.error });
      if (claimed) return { claimed };
      const recorded = await findAction(deps, request.agentId, request.idempotencyKey);
      return recorded ? { recorded } : undefined;
    },
    (claim) => claim !== undefined,
  );
  if (!claim) throw new Error(`action ${request.idempotencyKey} was neither recorded nor found`);
  return claim;
}

export async function findAction(deps: Pick<FleetDeps, "db">, agentId: string, idempotencyKey: string): Promise<ActionRow | undefined> {
  const [row] = await actionQuery(deps, agentId, idempotencyKey);
  return row;
}

/** The action recorded under a key, as a statement (the action facts read it in their batch). */
export function actionQuery(deps: Pick<FleetDeps, "db">, agentId: string, idempotencyKey: string) {
  return deps.db
    .select()
    .from(actions)
    .where(and(eq(actions.agentId, agentId), eq(actions.idempotencyKey, idempotencyKey)));
}

/** The answer for a key already used: what was recorded, without acting again. */
export async function recordedResult(deps: Pick<FleetDeps, "db">, row: ActionRow): Promise<ActionResult> {
  const base = { actionId: row.id, repeated: true, ...(row.approvalId !== null ? { approvalId: row.approvalId } : {}) };
  switch (row.status) {
    case "succeeded":
      return { ...base, status: "succeeded" };
    case "awaiting_approval":
      return { ...base, status: "awaiting_approval" };
    case "rate_limited":
      return { ...base, status: "rate_limited", error: row.error ?? "rate limited" };
    case "proposed":
      return { ...base, status: "proposed" };
    case "refused":
      return { ...base, status: "refused", error: row.error ?? "refused by a bound" };
    case "approved": {
      // The approved request's outcome is the human-decided execution's.
      const executed = await findAction(deps, row.agentId, approvalActionKey(row.approvalId ?? 0));
      if (executed && executed.id !== row.id) return { ...(await recordedResult(deps, executed)), actionId: row.id };
      return { ...base, status: "failed", error: "approved, but its execution was not recorded" };
    }
    case "rejected":
      return { ...base, status: "failed", error: row.error ?? "rejected by a human" };
    case "pending":
      return { ...base, status: "failed", error: "an action with this idempotency key is in progress or was interrupted; outcome unknown" };
    default:
      return { ...base, status: "failed", error: row.error ?? `action ${row.status}` };
  }
}

/** The idempotency key of the execution an approval triggers: one approval, one execution. */
export const approvalActionKey = (approvalId: number) => `approval:${approvalId}`;

/** Finishes an action row; `providerCalled` is what the rate limit counts. */
export function finishAction(
  deps: Pick<FleetDeps, "db" | "clock">,
  actionId: number,
  outcome: { status: string; result: Record<string, unknown>; error?: string },
) {
  return deps.db
    .update(actions)
    .set({ status: outcome.status, result: outcome.result, error: outcome.error?.slice(0, 1000) ?? null, finishedAt: deps.clock.now() })
    .where(eq(actions.id, actionId));
}

/**
 * Records a successful action: the action row, the instance's implied state (never over a newer
 * reported change) and an instance history row with source `action`, in one batch. Deliberately
 * no inbox event and no run request: runs never trigger runs.
 */
export async function recordSuccess(
  deps: Pick<FleetDeps, "db" | "clock" | "provider" | "config">,
  actionId: number,
  request: ActionRequest,
): Promise<void> {
  const { db, clock } = deps;
  const now = clock.now();
  const implied = IMPLIED_STATE[request.kind];
  const { agentId, instanceId } = request;
  const stored = sql`(select ${instances.state} from ${instances} where ${instances.agentId} = ${agentId} and ${instances.id} = ${instanceId})`;
  const message = request.kind === "label" ? `label set to ${request.label ?? ""}` : `${request.kind} by ${request.decidedBy}`;
  const result = {
    providerCalled: true,
    provider: deps.provider.kind,
    state: implied,
    ...(request.label !== undefined ? { label: request.label } : {}),
  };
  await db.batch([
    finishAction(deps, actionId, { status: "succeeded", result }),
    db.insert(instanceEvents).values({
      agentId,
      instanceId,
      fromState: stored,
      toState: sql`coalesce(${implied}, ${stored}, 'unknown')`,
      source: "action",
      message,
      at: now,
      eventId: null,
      createdAt: now,
    }),
    db
      .update(instances)
      .set({
        ...(implied
          ? {
              state: sql`case when ${instances.stateAt} <= ${now} then ${implied} else ${instances.state} end`,
              stateAt: sql`max(${instances.stateAt}, ${now})`,
              statusMessage: message,
            }
          : {}),
        ...(request.kind === "label" ? { label: request.label ?? null } : {}),
        ...(request.kind === "destroy" ? { goneAt: now } : {}),
        ...expectationAfter(request.kind, now, deps.config.loadingTimeoutMs),
        updatedAt: now,
      })
      .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId))),
  ]);
}
