/** Request shapes of the approval routes. */
import { z } from "zod";
import { APPROVAL_STATUSES } from "../../fleet/actions/approvals.ts";
import { agentParam } from "../../jobs/agent-requests.ts";
import { plainText } from "../../runtime/plain-text.ts";

export const approvalsQuery = z.object({
  status: z.enum(APPROVAL_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const approvalParam = agentParam.extend({ id: z.coerce.number().int().positive() });

export const decisionBody = z.object({
  decision: z.enum(["approve", "reject"]),
  note: plainText(z.string().trim().max(1000, "must be at most 1000 characters")).optional(),
});
