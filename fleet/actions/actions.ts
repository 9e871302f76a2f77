/**
 * executeAction: the one way anything (the agent's tools, the rules policy, a human approval)
 * acts on an instance through the provider, and the audit of every attempt. An idempotency key
 * makes a repeat return the recorded result without calling the provider again; kinds that need
 * approval become a pending approval instead of a call; a per-instance hourly quota bounds how
 * often the provider is called. A provider failure is recorded and returned, never thrown: an
 * outage in the middle of a run must not crash the run, and nothing here retries on its own.
 *
 * Issue #22: the run and hour bounds (fleet/actions/bounds.ts) are decided in the claim, a refusal is
 * recorded as `refused` and told to a human once per run; in shadow mode (AGENT_MODE=shadow) a
 * decision that is not a human's is recorded as `proposed` and the provider is never called.
 * Every record carries its evidence and, for the LLM, the model that decided it. A kind the
 * provider lacks (fleet/providers/capabilities.ts) is recorded `failed` with a 501 before anything else.
 */
import { desc, eq } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions } from "../../schema/index.ts";
import { iso } from "../../runtime/time.ts";
import { claimAction, finishAction, recordedResult, recordSuccess } from "./action-records.ts";
import { ProviderError, unsupported } from "../providers/provider.ts";
import { ACTION_CAPABILITY, lacks } from "../providers/capabilities.ts";
import { approveReplacement } from "../replacement/replacement-rows.ts";
import { requestApproval } from "./request-approval.ts";
import { spendGate } from "./spend-gate.ts";
import { tellRefused } from "./bounds.ts";
import { leaseRemainingMs, type RunFence } from "../../pipeline/index.ts";
import type { ActionEvidence, ActionRequest, ActionResult } from "./action-types.ts";

/** What acting on an instance needs: the provider, and what recording and notifying need. */
export type ActionDeps = Pick<FleetDeps, "db" | "clock" | "config" | "provider" | "scheduler" | "log">;

export function needsApproval(deps: Pick<FleetDeps, "config">, request: Pick<ActionRequest, "kind" | "decidedBy">): boolean {
  return request.decidedBy !== "human" && deps.config.approvalRequired.includes(request.kind);
}

/** Shadow mode: a decision that is not a human's is recorded as a proposal and never sent. */
export function inShadow(deps: Pick<FleetDeps, "config">, request: Pick<ActionRequest, "decidedBy">): boolean {
  return deps.config.mode === "shadow" && request.decidedBy !== "human";
}

export async function executeAction(deps: ActionDeps, request: ActionRequest): Promise<ActionResult> {
  const missing = lacks(deps.provider, request.kind);
  if (missing) return recordUnsupported(deps, request, missing);
  const overBudget = await spendGate(deps, request);
  if (overBudget) return overBudget;
  if (needsApproval(deps, request)) return requestApproval(deps, request);

  const claim = await claimAction(deps, request, inShadow(deps, request) ? "proposed" : "pending");
  if ("recorded" in claim) return recordedResult(deps, claim.recorded);
  const { claimed } = claim;
  const base = { actionId: claimed.id, repeated: false, ...(request.approvalId !== undefined ? { approvalId: request.approvalId } : {}) };

  if (claimed.status === "rate_limited") {
    const error = `rate limit: at most ${deps.config.actionRateLimitPerHour} provider actions per instance per hour`;
    await finishAction(deps, claimed.id, { status: "rate_limited", result: { providerCalled: false }, error });
    return { ...base, status: "rate_limited", error };
  }
  if (claimed.status === "refused") {
    const error = claimed.error ?? "refused by a bound";
    await finishAction(deps, claimed.id, { status: "refused", result: { providerCalled: false }, error });
    await tellRefused(deps, request, "actions", error);
    return { ...base, status: "refused", error };
  }
  if (request.kind === "label" && !request.label) {
    const error = "a label action needs a label";
    await finishAction(deps, claimed.id, { status: "failed", result: { providerCalled: false }, error });
    return { ...base, status: "failed", error };
  }
  if (claimed.status === "proposed") {
    await finishAction(deps, claimed.id, { status: "proposed", result: { providerCalled: false, shadow: true } });
    deps.log.info("action proposed (shadow mode)", { agentId: request.agentId, actionId: claimed.id, runId: request.runId, instanceId: request.instanceId, kind: request.kind });
    return { ...base, status: "proposed" };
  }

  try {
    await callProvider(deps, request);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    deps.log.error("provider action failed", { agentId: request.agentId, actionId: claimed.id, kind: request.kind, error });
    await finishAction(deps, claimed.id, {
      status: "failed",
      result: {
        providerCalled: true,
        provider: deps.provider.kind,
        ...(err instanceof ProviderError ? { httpStatus: err.status, retryable: err.retryable } : {}),
      },
      error,
    });
    return { ...base, status: "failed", error };
  }
  await recordSuccess(deps, claimed.id, request);
  deps.log.info("action taken", { agentId: request.agentId, actionId: claimed.id, runId: request.runId, instanceId: request.instanceId, kind: request.kind, decidedBy: request.decidedBy });
  return { ...base, status: "succeeded" };
}

/**
 * A kind the provider cannot do is recorded `failed` with its 501 error before anything else
 * (approval, shadow proposal, provider call): nobody, human, rules or model, is asked to approve
 * or review what cannot happen. A repeated key answers with its record.
 */
async function recordUnsupported(deps: ActionDeps, request: ActionRequest, missing: ProviderError): Promise<ActionResult> {
  const claim = await claimAction(deps, request);
  if ("recorded" in claim) return recordedResult(deps, claim.recorded);
  const result = { providerCalled: false, provider: deps.provider.kind, httpStatus: missing.status, unsupported: ACTION_CAPABILITY[request.kind] };
  await finishAction(deps, claim.claimed.id, { status: "failed", result, error: missing.message });
  deps.log.info("action not a capability of the provider", { agentId: request.agentId, actionId: claim.claimed.id, kind: request.kind, provider: deps.provider.kind });
  return { actionId: claim.claimed.id, repeated: false, status: "failed", error: missing.message };
}

/** Calls the provider; a run's call (and its retries) is aborted when the run's lease runs out. */
function callProvider(deps: ActionDeps, request: ActionRequest): Promise<void> {
  const { provider } = deps;
  const remaining = leaseRemainingMs(request.fence, deps.clock.now());
  const call = remaining === null ? {} : { signal: AbortSignal.timeout(remaining) };
  switch (request.kind) {
    case "start":
      return provider.start(request.instanceId, call);
    case "stop":
      return provider.stop(request.instanceId, call);
    case "reboot":
      return provider.reboot(request.instanceId, call);
    case "destroy":
      return provider.destroy(request.instanceId, call);
    case "label":
      return provider.setLabel(request.instanceId, request.label!, call);
    case "replace":
      return beginReplacement(deps, request);
  }
}

/**
 * An executed `replace` (approved, or not approval-gated): the open proposal becomes `approved`
 * and takes its first step (offers, the one create); the tick takes the rest (fleet/replacement/replacement.ts).
 * Imported when used: the replacement's own steps act through executeAction.
 */
async function beginReplacement(deps: ActionDeps, request: ActionRequest): Promise<void> {
  if (!deps.provider.capabilities.has("create")) throw unsupported(deps.provider.kind, "create");
  const row = await approveReplacement(deps, request);
  const { stepReplacement } = await import("../replacement/replacement.ts");
  await stepReplacement(deps, row);
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
