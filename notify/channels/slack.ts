/**
 * Slack incoming webhook: a JSON `{text}` POSTed to the webhook URL (mrkdwn: *bold* title).
 * Every piece of text is escaped as Slack's "Escaping text" asks
 * (https://api.slack.com/reference/surfaces/formatting#escaping): `&`, `<` and `>` become
 * `&amp;`, `&lt;`, `&gt;`, so a title or body (a webhook message, a Vast status_msg, LLM output)
 * can never hold a control sequence such as `<!channel>` or `<https://evil.example|dashboard>`.
 * Slack answers 200 `ok`; a 4xx (invalid_payload, no_service) will not get better on retry.
 */
import { postOnce, severityLabel, type ChannelMessage } from "./channel.ts";

export function escapeSlackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function formatSlack(message: ChannelMessage): { text: string } {
  return { text: `*[${severityLabel(message.severity)}] ${escapeSlackText(message.title)}*\n${escapeSlackText(message.body)}` };
}

export async function sendSlack(url: string, message: ChannelMessage, timeoutMs?: number): Promise<void> {
  await postOnce(
    "slack",
    url,
    { headers: { "Content-Type": "application/json" }, body: JSON.stringify(formatSlack(message)) },
    timeoutMs,
  );
}
