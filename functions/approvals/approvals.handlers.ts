/** Handlers of /api/agents/:agent/approvals: pending and decided approvals, and deciding one. */
import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { decideApproval, listApprovals, type ApprovalStatus, type Decision } from "../../fleet/approvals.ts";

type Ctx = Context<AppEnv>;

export async function getApprovals(c: Ctx, agentId: string, status: ApprovalStatus | undefined, limit: number) {
  return c.json({ approvals: await listApprovals(c.get("deps"), agentId, status, limit) });
}

/** 404 unknown approval and 409 already decided come from ApprovalError through onError. */
export async function postDecision(c: Ctx, agentId: string, approvalId: number, decision: Decision, note: string | undefined) {
  return c.json(await decideApproval(c.get("deps"), agentId, approvalId, decision, note || undefined, "a human via the operator API"));
}
