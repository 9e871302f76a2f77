/**
 * An approval's Slack message as Block Kit (issue #24, item 5): a `section` with the alert's text
 * (mrkdwn, escaped as every Slack text is, cut to Slack's 3,000 characters for a section's text)
 * and, while the approval is pending, an `actions` block with an Approve (`primary`) and a Reject
 * (`danger`) button. Each button's `value` names the agent and the approval (`<agent>:<id>`), and
 * its `action_id` the decision, which is all POST /integrations/slack/interactions reads back from
 * the `block_actions` payload. `text` stays as the notification's fallback (Slack shows it where
 * blocks cannot be shown). Written from Slack's docs (read 2026-12-02): Block Kit
 * https://docs.slack.dev/reference/block-kit/blocks/actions-block, the button element
 * https://docs.slack.dev/reference/block-kit/block-elements/button-element (text plain_text ≤ 75,
 * action_id ≤ 255, value ≤ 2,000, style primary | danger), and
 * https://docs.slack.dev/messaging/creating-interactive-messages.
 */
import { truncate } from "./discord.ts";

export const SLACK_SECTION_MAX = 3000;
export const APPROVE_ACTION = "fleetwarden_approve";
export const REJECT_ACTION = "fleetwarden_reject";

/** `<agent>:<approval id>`, what a button carries. */
export const approvalValue = (agentId: string, approvalId: number) => `${agentId}:${approvalId}`;

export function parseApprovalValue(value: unknown): { agentId: string; approvalId: number } | null {
  const m = typeof value === "string" ? /^([A-Za-z0-9_-]{1,64}):([1-9][0-9]{0,15})$/.exec(value) : null;
  return m ? { agentId: m[1]!, approvalId: Number(m[2]) } : null;
}

export function sectionBlock(text: string) {
  return { type: "section", text: { type: "mrkdwn", text: truncate(text, SLACK_SECTION_MAX) } };
}

export function approvalBlocks(text: string, approval: { agentId: string; approvalId: number; decidable: boolean }) {
  const value = approvalValue(approval.agentId, approval.approvalId);
  const button = (label: string, actionId: string, style: "primary" | "danger") => ({
    type: "button",
    text: { type: "plain_text", text: label },
    action_id: actionId,
    value,
    style,
  });
  return [
    sectionBlock(text),
    ...(approval.decidable
      ? [
          {
            type: "actions",
            block_id: `approval-${approval.approvalId}`,
            elements: [button("Approve", APPROVE_ACTION, "primary"), button("Reject", REJECT_ACTION, "danger")],
          },
        ]
      : []),
  ];
}
