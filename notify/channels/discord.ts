/**
 * Discord webhook: a JSON `{content}` of at most 2,000 characters (Discord rejects longer ones),
 * with mentions disabled so an alert text can never ping @everyone. Discord answers 204.
 */
import { postOnce, severityLabel, type ChannelMessage } from "./channel.ts";

export const DISCORD_MAX_CONTENT = 2000;

/** Cuts to `max` code points, ending with an ellipsis when something was cut. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max - 1).join("") + "…";
}

export function formatDiscord(message: ChannelMessage): { content: string; allowed_mentions: { parse: never[] } } {
  const content = truncate(`**[${severityLabel(message.severity)}] ${message.title}**\n${message.body}`, DISCORD_MAX_CONTENT);
  return { content, allowed_mentions: { parse: [] } };
}

export async function sendDiscord(url: string, message: ChannelMessage, timeoutMs?: number): Promise<void> {
  await postOnce(
    "discord",
    url,
    { headers: { "Content-Type": "application/json" }, body: JSON.stringify(formatDiscord(message)) },
    timeoutMs,
  );
}
