/**
 * The daily spend guard (issue 21, part 3): at or over SPEND_LIMIT_PER_DAY_USD (per agent), an
 * action that adds spend — `start`, and `replace` (it rents a new instance) — is
 * not taken on the LLM's or the rules policy's word: it becomes an approval request naming
 * today's spend and the limit. A human's decision (an approval being executed, the dashboard's
 * own action) passes. Called once, at the top of executeAction, so every path to the provider
 * meets it. What bounds it: requestApproval's own keys (one approval per action key, and while
 * one is pending for the same action on the same instance, that one is the answer).
 */
import type { ActionDeps } from "./actions.ts";
import type { ActionKind, ActionRequest, ActionResult } from "./action-types.ts";
import { requestApproval } from "./request-approval.ts";
import { spendToday } from "../economics/spend.ts";

/** Kinds that add spend. */
export const SPENDING_KINDS: ReadonlySet<ActionKind> = new Set(["start", "replace"]);

/** The approval request the limit calls for, or null when the action may go on. */
export async function spendGate(deps: ActionDeps, request: ActionRequest): Promise<ActionResult | null> {
  const limit = deps.config.economics.spendLimitPerDayUsd;
  if (limit === null || request.decidedBy === "human" || !SPENDING_KINDS.has(request.kind)) return null;
  const today = await spendToday(deps, request.agentId);
  if (today < limit) return null;
  const why = `estimated spend today $${today.toFixed(2)} is at or over the daily limit $${limit.toFixed(2)}, so ${request.kind} ${request.instanceId} (which adds spend) needs a human's approval`;
  return requestApproval(deps, { ...request, reason: request.reason ? `${why}. Asked because: ${request.reason}` : why });
}
