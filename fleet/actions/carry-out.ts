/**
 * Carrying out what the action table decided (fleet/actions/decide.ts), one function per outcome.
 * Nothing here decides whether a human is needed; the bounds and the per-instance rate limit are
 * decided in the recording statement (claimAction, requestApproval's filing). A provider failure is
 * recorded and returned, never thrown: an outage in the middle of a run must not crash the run,
 * and nothing here retries on its own.
 */
import type { FleetDeps } from "../deps.ts";
import { claimAction, finishAction, recordedResult, recordSuccess } from "./action-records.ts";
import { ProviderError } from "../providers/provider.ts";
import { ACTION_CAPABILITY, lacks } from "../providers/capabilities.ts";
import { recordUnfiled, requestApproval } from "./request-approval.ts";
import { markReplacementApproved } from "./replace-approval.ts";
import { describeBlock } from "./action-blocks.ts";
import { tellRefused } from "./bounds.ts";
import { tellMoneyMove } from "./money-told.ts";
import { accountProvider } from "../providers/scoped-provider.ts";
import { leaseRemainingMs } from "../../pipeline/index.ts";
import type { ActionRequest, ActionResult } from "./action-types.ts";
import { OWNER_RENTALS_PER_HOUR, type Decision } from "./decide.ts";
import { rent } from "./rent.ts";
import type { Gathered } from "./action-facts.ts";
import { noopTracer } from "../../runtime/trace.ts";

/** What acting on an instance needs: the provider, and what recording and notifying need. */
export type ActionDeps = Pick<FleetDeps, "db" | "clock" | "config" | "provider" | "scheduler" | "log" | "tracer">;

/**
 * Carries the decision out. Within a traced run it is a child span of the run (runtime/trace.ts):
 * the kind, instance, decided outcome, recorded status and error; nothing is recorded otherwise.
 */
export async function carryOut(deps: ActionDeps, request: ActionRequest, decision: Decision, gathered: Gathered): Promise<ActionResult> {
  const span = (deps.tracer ?? noopTracer).startChild(
    request.runId === null ? null : { agentId: request.agentId, runId: request.runId },
    `fleetwarden.action ${request.kind}`,
    "client",
    {
      "fleetwarden.action.kind": request.kind,
      "fleetwarden.instance.id": request.instanceId,
      "fleetwarden.action.decided_by": request.decidedBy,
      "fleetwarden.action.outcome": decision.outcome,
      "fleetwarden.provider": deps.provider.kind,
    },
  );
  try {
    const result = await carryOutDecision(deps, request, decision, gathered);
    span.setAttributes({
      "fleetwarden.action.id": result.actionId,
      "fleetwarden.action.status": result.status,
      "fleetwarden.action.repeated": result.repeated,
      "fleetwarden.action.error": result.error ?? null,
    });
    span.end(result.status === "failed" ? (result.error ?? "failed") : null);
    return result;
  } catch (err) {
    span.end(err instanceof Error ? err.message : String(err));
    throw err;
  }
}

async function carryOutDecision(deps: ActionDeps, request: ActionRequest, decision: Decision, gathered: Gathered): Promise<ActionResult> {
  switch (decision.outcome) {
    case "unsupported":
      return recordUnsupported(deps, request);
    case "recorded":
      return recordedResult(deps, gathered.recorded!);
    case "wait": {
      const waiting = gathered.pending!;
      return { actionId: waiting.actionId ?? 0, status: "awaiting_approval", repeated: true, approvalId: waiting.id };
    }
    case "blocked": {
      const error = `blocked: ${describeBlock(gathered.block!)}. Do not ask again unless a human asks for it.`;
      return recordUnfiled(deps, request, { status: "blocked", error, result: { providerCalled: false } });
    }
    case "refused": {
      // An owner's rental past their budget or hourly count (issue #35): refused with the figures, nobody asked.
      const error =
        gathered.facts.ownerOverBudget ??
        `refused: owner ${request.rent?.owner ?? "?"} already rented ${OWNER_RENTALS_PER_HOUR} instances in the last hour on this agent (owner rentals per hour); nothing was rented`;
      return recordUnfiled(deps, request, { status: "refused", error, result: { providerCalled: false } });
    }
    case "proposed":
      // What would have asked a human files nothing in shadow mode; what would have acted is claimed (bounded) as a proposal.
      if (decision.humanNeeded.length > 0)
        return recordUnfiled(deps, request, {
          status: "proposed",
          result: { providerCalled: false, shadow: true, approvalRequested: false },
        });
      return act(deps, request, "proposed");
    case "approval":
      return requestApproval(deps, { ...request, reason: approvalReason(deps, request, decision, gathered) });
    case "act":
      return act(deps, request, "pending");
  }
}

/** What the approver reads: the spend limit's figures, the caller's reason to ask, then the decider's reason. */
function approvalReason(deps: ActionDeps, request: ActionRequest, decision: Decision, gathered: Gathered): string | undefined {
  const asked = request.askHuman ?? request.reason;
  if (!decision.humanNeeded.includes("spend limit")) return asked;
  const limit = deps.config.economics.spendLimitPerDayUsd!;
  const why = `estimated spend today $${(gathered.spendToday ?? 0).toFixed(2)} is at or over the daily limit $${limit.toFixed(2)}, so ${request.kind} ${request.instanceId} (which adds spend) needs a human's approval`;
  return asked ? `${why}. Asked because: ${asked}` : why;
}

/** Claims the key (bounds and rate limit decided in the claim) and calls the provider, or records the proposal. */
async function act(deps: ActionDeps, request: ActionRequest, go: "pending" | "proposed"): Promise<ActionResult> {
  const claim = await claimAction(deps, request, go);
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
    deps.log.info("action proposed (shadow mode)", {
      agentId: request.agentId,
      actionId: claimed.id,
      runId: request.runId,
      instanceId: request.instanceId,
      kind: request.kind,
    });
    return { ...base, status: "proposed" };
  }

  if (request.kind === "rent") return rent(deps, request, claimed.id, base);
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
  // Done without a human: told once, with why and what it changes per hour, read from the
  // instance's state before recordSuccess writes the state the action implies.
  await tellMoneyMove(deps, request, claimed.id);
  await recordSuccess(deps, claimed.id, request);
  deps.log.info("action taken", {
    agentId: request.agentId,
    actionId: claimed.id,
    runId: request.runId,
    instanceId: request.instanceId,
    kind: request.kind,
    decidedBy: request.decidedBy,
  });
  return { ...base, status: "succeeded" };
}

/**
 * A kind the provider cannot do is recorded `failed` with its 501 error before anything else
 * (approval, shadow proposal, provider call): nobody, human, rules or model, is asked to approve
 * or review what cannot happen. A repeated key answers with its record.
 */
async function recordUnsupported(deps: ActionDeps, request: ActionRequest): Promise<ActionResult> {
  const missing = lacks(deps.provider, request.kind)!;
  const claim = await claimAction(deps, request);
  if ("recorded" in claim) return recordedResult(deps, claim.recorded);
  const result = {
    providerCalled: false,
    provider: deps.provider.kind,
    httpStatus: missing.status,
    unsupported: ACTION_CAPABILITY[request.kind],
  };
  await finishAction(deps, claim.claimed.id, { status: "failed", result, error: missing.message });
  deps.log.info("action not a capability of the provider", {
    agentId: request.agentId,
    actionId: claim.claimed.id,
    kind: request.kind,
    provider: deps.provider.kind,
  });
  return { actionId: claim.claimed.id, repeated: false, status: "failed", error: missing.message };
}

/** Calls the provider; a run's call (and its retries) is aborted when the run's lease runs out. */
function callProvider(deps: ActionDeps, request: ActionRequest): Promise<void> {
  // An orphan's stop goes to the whole account: the agent's filter does not claim the instance.
  const provider = request.account ? accountProvider(deps.provider) : deps.provider;
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
      return markReplacementApproved(deps, request);
    case "rent":
      throw new Error("a rental is carried out by fleet/actions/rent.ts");
  }
}
