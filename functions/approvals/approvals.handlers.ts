/** Handlers of /api/agents/:agent/approvals: pending and decided approvals, and deciding one. */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { recordActivity } from "../../auth/activity.ts";
import { decideApproval, listApprovals, type ApprovalStatus, type Decision } from "../../fleet/actions/approvals.ts";

type Ctx = Context<AppEnv>;

export async function getApprovals(c: Ctx, agentId: string, status: ApprovalStatus | undefined, limit: number) {
  return c.json({ approvals: await listApprovals(c.get("deps"), agentId, status, limit) });
}

/** 404 unknown approval and 409 already decided: ApprovalError is a RequestError, answered by onError. */
export async function postDecision(c: Ctx, agentId: string, approvalId: number, decision: Decision, note: string | undefined) {
  const deps = c.get("deps");
  const who = c.get("operator");
  const decided = await decideApproval(deps, agentId, approvalId, decision, note || undefined, who.name);
  await recordActivity(deps.db, who, { action: decision, agentId, subject: approvalId, at: deps.clock.now() });
  return c.json(decided);
}
