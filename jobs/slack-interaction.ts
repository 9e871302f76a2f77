/**
 * POST /integrations/slack/interactions (issue #24, item 5): an Approve or Reject button clicked
 * in Slack. Verified on the raw body first (auth/slack-signature.ts; 503 without
 * SLACK_SIGNING_SECRET, 401 a bad, stale or missing signature), then the form's `payload` is read
 * as a `block_actions` interaction (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload,
 * read 2026-12-02: `type`, `user.id`, `actions[].action_id` / `value`, `response_url`,
 * `container`, `trigger_id`). The Slack user must be a live operator (`slackUserId`) with the
 * operator role; otherwise nothing is decided and the clicker alone is told why (an ephemeral
 * answer). Slack wants an answer within 3 seconds, so the decision itself (which may call the
 * provider) runs after the acknowledgement (`followUp`: the host keeps it alive), through
 * decideApproval like every other path, and its outcome replaces the buttons through the
 * payload's response_url (jobs/slack-response-url.ts). A repeated click on a decided approval
 * decides nothing new and says so: decideApproval is keyed by the approval.
 */
import type { Deps } from "./deps.ts";
import { verifySlackRequest } from "../auth/slack-signature.ts";
import { principalForSlackUser } from "../auth/operators-store.ts";
import { hasRole, type Principal } from "../auth/roles.ts";
import { recordActivity } from "../auth/activity.ts";
import { decideApproval, type Decision } from "../fleet/actions/approvals.ts";
import { executionWords } from "../fleet/actions/approval-messages.ts";
import { approvals } from "../schema/index.ts";
import { and, eq } from "drizzle-orm";
import { APPROVE_ACTION, REJECT_ACTION, parseApprovalValue, sectionBlock } from "../notify/channels/slack-blocks.ts";
import { escapeSlackText } from "../notify/channels/slack.ts";
import { acceptedResponseUrl, postToResponseUrl, type SlackResponse } from "./slack-response-url.ts";
import { withAgent } from "./with-agent.ts";
import { RequestError } from "./errors.ts";

export interface SlackAnswer {
  status: 200 | 400 | 401 | 503;
  body: Record<string, unknown>;
  /** Work to finish after answering (the decision and the response_url message). */
  followUp?: () => Promise<void>;
}

const DECISIONS: Record<string, Decision> = { [APPROVE_ACTION]: "approve", [REJECT_ACTION]: "reject" };

const ephemeral = (text: string): SlackAnswer => ({ status: 200, body: { response_type: "ephemeral", replace_original: false, text } });
const refused = (status: 400 | 401 | 503, error: string): SlackAnswer => ({ status, body: { error } });

interface Click {
  user: string;
  decision: Decision;
  agentId: string;
  approvalId: number;
  responseUrl: unknown;
}

/** The one click a block_actions payload carries, or why it is not one of ours. */
function readClick(raw: string): Click | string {
  const payloadText = new URLSearchParams(raw).get("payload");
  if (payloadText === null) return "body must be application/x-www-form-urlencoded with a payload field";
  let payload: { type?: unknown; user?: { id?: unknown }; actions?: { action_id?: unknown; value?: unknown }[]; response_url?: unknown };
  try {
    payload = JSON.parse(payloadText) as typeof payload;
  } catch {
    return "payload is not JSON";
  }
  if (payload.type !== "block_actions") return `payload type ${JSON.stringify(payload.type)} is not handled (only block_actions)`;
  const action = Array.isArray(payload.actions) ? payload.actions[0] : undefined;
  const decision = typeof action?.action_id === "string" ? DECISIONS[action.action_id] : undefined;
  if (!decision) return "actions[0].action_id is not an approval button";
  const target = parseApprovalValue(action?.value);
  if (!target) return "actions[0].value must be <agent>:<approval id>";
  if (typeof payload.user?.id !== "string" || payload.user.id === "") return "user.id is missing";
  return { user: payload.user.id, decision, ...target, responseUrl: payload.response_url };
}

export async function handleSlackInteraction(
  deps: Deps,
  request: { raw: string; timestamp: string | undefined; signature: string | undefined },
): Promise<SlackAnswer> {
  const secret = deps.config.slackSigningSecret;
  if (!secret) return refused(503, "Slack interactivity is not configured: set SLACK_SIGNING_SECRET");
  const verdict = await verifySlackRequest(secret, request, deps.clock.now());
  if (!verdict.ok) return refused(401, `signature rejected: ${verdict.reason}`);
  const click = readClick(request.raw);
  if (typeof click === "string") return refused(400, `invalid interaction: ${click}`);

  const who = await principalForSlackUser(deps.db, click.user);
  if (!who)
    return ephemeral(
      `Your Slack user (${click.user}) is not a fleetwarden operator: an admin maps it with PATCH /api/operators/:id {"slackUserId"}. Nothing was decided.`,
    );
  if (!hasRole(who, "operator"))
    return ephemeral(`${who.name} is a ${who.role}: only operators and admins may decide approvals. Nothing was decided.`);
  const scope = await withAgent(deps, click.agentId);
  if (!scope) return ephemeral(`Unknown agent ${click.agentId}. Nothing was decided.`);
  const [row] = await deps.db
    .select()
    .from(approvals)
    .where(and(eq(approvals.id, click.approvalId), eq(approvals.agentId, click.agentId)));
  if (!row) return ephemeral(`Unknown approval ${click.approvalId}. Nothing was decided.`);
  if (row.status !== "pending")
    return ephemeral(`Approval ${row.id} is already ${row.status}${row.decidedBy ? ` by ${row.decidedBy}` : ""}: nothing new was decided.`);
  if (scope.archived) return ephemeral(`Agent ${click.agentId} is archived: nothing was decided.`);

  const url = acceptedResponseUrl(deps.config, click.responseUrl);
  if (!url) deps.log.error("ignoring a Slack response_url that is not Slack's", { approvalId: row.id });
  return { status: 200, body: {}, followUp: () => decideFromSlack(scope.deps, who, click, url) };
}

/** The decision as the operator, then its outcome in place of the buttons (or, refused, to the clicker alone). */
async function decideFromSlack(deps: Deps, who: Principal, click: Click, url: URL | null): Promise<void> {
  let answer: SlackResponse;
  try {
    const { approval } = await decideApproval(deps, click.agentId, click.approvalId, click.decision, "via Slack", who.name);
    await recordActivity(deps.db, who, { action: click.decision, agentId: click.agentId, subject: click.approvalId, at: deps.clock.now() });
    const how = click.decision === "approve" ? "Approved" : "Rejected";
    const text = `*${how} by ${escapeSlackText(who.name)}*: ${escapeSlackText(`${approval.kind} ${approval.instanceId ?? ""}`.trim())}${approval.execution ? ` (${executionWords(approval.kind, approval.execution)})` : ""}`;
    answer = { replace_original: true, text, blocks: [sectionBlock(text)] };
  } catch (err) {
    if (!(err instanceof RequestError)) throw err;
    answer = { response_type: "ephemeral", replace_original: false, text: `Nothing was decided: ${escapeSlackText(err.message)}` };
  }
  if (url) await postToResponseUrl(deps.log, url, answer);
}
