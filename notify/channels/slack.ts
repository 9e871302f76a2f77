/**
 * Slack incoming webhook: a JSON `{text}` POSTed to the webhook URL (mrkdwn: *bold* title).
 * Every piece of text is escaped as Slack's "Escaping text" asks
 * (https://api.slack.com/reference/surfaces/formatting#escaping): `&`, `<` and `>` become
 * `&amp;`, `&lt;`, `&gt;`, so a title or body (a webhook message, a Vast status_msg, LLM output)
 * can never hold a control sequence such as `<!channel>` or `<https://evil.example|dashboard>`.
 * Slack answers 200 `ok`; a 4xx (invalid_payload, no_service) will not get better on retry.
 * An approval's message carries Approve/Reject buttons (slack-blocks.ts).
 */
import { postOnce, severityLabel, type ChannelMessage } from "./channel.ts";
import { approvalBlocks } from "./slack-blocks.ts";

export function escapeSlackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** `{text}`; an approval's message also carries blocks (slack-blocks.ts), `text` as their fallback. */
export function formatSlack(message: ChannelMessage): { text: string; blocks?: unknown[] } {
  const text = `*[${severityLabel(message.severity)}] ${escapeSlackText(message.title)}*\n${escapeSlackText(message.body)}`;
  return message.approval ? { text, blocks: approvalBlocks(text, message.approval) } : { text };
}

export async function sendSlack(url: string, message: ChannelMessage, timeoutMs?: number): Promise<void> {
  await postOnce("slack", url, { headers: { "Content-Type": "application/json" }, body: JSON.stringify(formatSlack(message)) }, timeoutMs);
}
