/**
 * Slack incoming webhook: a JSON `{text}` POSTed to the webhook URL (mrkdwn: *bold* title).
 * Slack answers 200 `ok`; a 4xx (invalid_payload, no_service) will not get better on retry.
 */
import { postOnce, severityLabel, type ChannelMessage } from "./channel.ts";

export function formatSlack(message: ChannelMessage): { text: string } {
  return { text: `*[${severityLabel(message.severity)}] ${message.title}*\n${message.body}` };
}

export async function sendSlack(url: string, message: ChannelMessage, timeoutMs?: number): Promise<void> {
  await postOnce(
    "slack",
    url,
    { headers: { "Content-Type": "application/json" }, body: JSON.stringify(formatSlack(message)) },
    timeoutMs,
  );
}
