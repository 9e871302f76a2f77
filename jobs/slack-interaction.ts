/**
 * POST /integrations/slack/interactions (issue #24, item 5; issue #37, item 1): an Approve or
 * Reject button clicked in Slack. Verified on the raw body first (auth/slack-signature.ts; 503
 * without SLACK_SIGNING_SECRET, 401 a bad, stale or missing signature), then the form's `payload`
 * is read as a `block_actions` interaction (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload,
 * read 2026-12-02: `type`, `user.id`, `actions[].action_id` / `value`, `response_url`,
 * `container`, `trigger_id`).
 *
 * Slack ignores the body of the acknowledgement of a block_actions click: what the clicker sees
 * comes only through the payload's `response_url` (https://docs.slack.dev/interactivity/handling-user-interaction,
 * "Acknowledgment response" and "Message responses"). So every click is acknowledged with an
 * empty 200 at once, and:
 * - a refusal at the click (unknown Slack user, role too low, unknown or already decided
 *   approval, archived agent) is POSTed to response_url as an ephemeral message for the clicker
 *   alone (`followUp`, one short POST the host keeps alive);
 * - anything to decide is handed to the scheduler as a durable `slack-decision` delivery before the
 *   acknowledgement (not the Worker's `waitUntil`, which is cancelled 30 s after the response while
 *   a provider call may take 4 × 30 s). The delivery (deliverSlackDecision, through
 *   jobs/deliver.ts) decides through decideApproval like every other path; a refusal there
 *   (two-person rule, expired) is ephemeral, the outcome replaces the buttons (`replace_original`).
 * Bound: one delivery per click, dedup key `slack:<agent>:<approval>:<Slack user>` (a double click
 * decides once), retried at most the scheduler's retry limit (local MAX_ATTEMPTS, QStash
 * `retries`); a redelivery completes the same decision and never repeats the action (the action's
 * idempotency key is the approval's).
 */
import type { Deps } from "./deps.ts";
import type { DeliveryBody } from "../pipeline/index.ts";
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
  /** A short POST to finish after answering (a refusal's ephemeral message to response_url). */
  followUp?: () => Promise<void>;
}

type SlackDecisionBody = Extract<DeliveryBody, { type: "slack-decision" }>;

const DECISIONS: Record<string, Decision> = { [APPROVE_ACTION]: "approve", [REJECT_ACTION]: "reject" };

const ephemeralMessage = (text: string): SlackResponse => ({ response_type: "ephemeral", replace_original: false, text });
const refused = (status: 400 | 401 | 503, error: string): SlackAnswer => ({ status, body: { error } });
/** The empty acknowledgement, and the clicker told `text` privately through response_url. */
const toldPrivately = (deps: Deps, url: URL | null, text: string): SlackAnswer => ({
  status: 200,
  body: {},
  ...(url ? { followUp: () => postToResponseUrl(deps.log, url, ephemeralMessage(text)) } : {}),
});

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
  if (typeof payload.user?.id !== "string" || payload.user.id === "" || payload.user.id.length > 64) return "user.id is missing";
  return { user: payload.user.id, decision, ...target, responseUrl: payload.response_url };
}

/** Why this Slack user may not decide, or who they are. */
async function operatorFor(deps: Deps, slackUser: string): Promise<Principal | string> {
  const who = await principalForSlackUser(deps.db, slackUser);
  if (!who)
    return `Your Slack user (${slackUser}) is not a fleetwarden operator: an admin maps it with PATCH /api/operators/:id {"slackUserId"}. Nothing was decided.`;
  if (!hasRole(who, "operator"))
    return `${who.name} is a ${who.role}: only operators and admins may decide approvals. Nothing was decided.`;
  return who;
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
  const url = acceptedResponseUrl(deps.config, click.responseUrl);
  if (!url) deps.log.error("ignoring a Slack response_url that is not Slack's", { approvalId: click.approvalId });

  const who = await operatorFor(deps, click.user);
  if (typeof who === "string") return toldPrivately(deps, url, who);
  const scope = await withAgent(deps, click.agentId);
  if (!scope) return toldPrivately(deps, url, `Unknown agent ${click.agentId}. Nothing was decided.`);
  if (scope.archived) return toldPrivately(deps, url, `Agent ${click.agentId} is archived: nothing was decided.`);
  const [row] = await deps.db
    .select()
    .from(approvals)
    .where(and(eq(approvals.id, click.approvalId), eq(approvals.agentId, click.agentId)));
  if (!row) return toldPrivately(deps, url, `Unknown approval ${click.approvalId}. Nothing was decided.`);
  if (row.status !== "pending") return toldPrivately(deps, url, alreadyDecided(row));

  const delivery: SlackDecisionBody = {
    type: "slack-decision",
    agentId: click.agentId,
    approvalId: row.id,
    decision: click.decision,
    slackUser: click.user,
    responseUrl: url ? url.href : null,
  };
  try {
    await deps.scheduler.publish({
      dedupKey: `slack:${click.agentId}:${row.id}:${click.user}`,
      notBefore: deps.clock.now(),
      body: delivery,
    });
  } catch (err) {
    deps.log.error("could not hand a Slack click to the scheduler", { approvalId: row.id, error: String(err) });
    return toldPrivately(
      deps,
      url,
      `fleetwarden could not queue your ${click.decision} (its scheduler is unreachable): nothing was decided, click again.`,
    );
  }
  return { status: 200, body: {} };
}

const alreadyDecided = (row: { id: number; status: string; decidedBy: string | null }) =>
  `Approval ${row.id} is already ${row.status}${row.decidedBy ? ` by ${row.decidedBy}` : ""}: nothing new was decided.`;

/**
 * The scheduled half of a click (jobs/deliver.ts): the decision as the operator, then its outcome
 * in place of the buttons, or, refused, a message to the clicker alone. Idempotent: a redelivery
 * after this operator's decision completes it (decideApproval with the same decision); another
 * operator's decision is reported, not repeated. A failure that is not a refusal throws, so the
 * scheduler retries (within its limit).
 */
export async function deliverSlackDecision(deps: Deps, archived: boolean, body: SlackDecisionBody): Promise<string> {
  const url = body.responseUrl === null ? null : acceptedResponseUrl(deps.config, body.responseUrl);
  const tell = async (message: SlackResponse, result: string) => {
    if (url) await postToResponseUrl(deps.log, url, message);
    return result;
  };
  if (archived) return tell(ephemeralMessage(`Agent ${body.agentId} is archived: nothing was decided.`), "refused");
  const who = await operatorFor(deps, body.slackUser);
  if (typeof who === "string") return tell(ephemeralMessage(who), "refused");
  const [row] = await deps.db
    .select()
    .from(approvals)
    .where(and(eq(approvals.id, body.approvalId), eq(approvals.agentId, body.agentId)));
  if (!row) return tell(ephemeralMessage(`Unknown approval ${body.approvalId}. Nothing was decided.`), "refused");
  if (row.status !== "pending" && row.decidedBy !== who.name) return tell(ephemeralMessage(alreadyDecided(row)), "refused");
  let decided: Awaited<ReturnType<typeof decideApproval>>;
  try {
    decided = await decideApproval(deps, body.agentId, body.approvalId, body.decision, "via Slack", who.name);
  } catch (err) {
    if (!(err instanceof RequestError)) throw err;
    return tell(ephemeralMessage(`Nothing was decided: ${escapeSlackText(err.message)}`), "refused");
  }
  if (row.status === "pending")
    await recordActivity(deps.db, who, { action: body.decision, agentId: body.agentId, subject: body.approvalId, at: deps.clock.now() });
  const { approval } = decided;
  const how = body.decision === "approve" ? "Approved" : "Rejected";
  const text = `*${how} by ${escapeSlackText(who.name)}*: ${escapeSlackText(`${approval.kind} ${approval.instanceId ?? ""}`.trim())}${approval.execution ? ` (${executionWords(approval.kind, approval.execution)})` : ""}`;
  return tell({ replace_original: true, text, blocks: [sectionBlock(text)] }, "decided");
}
