/**
 * Discord webhook (Execute Webhook, discord/discord-api-docs c98d64bc developers/resources/webhook.mdx):
 * a JSON `{content}` of at most 2,000 characters (Discord rejects longer ones), with mentions
 * disabled so an alert text can never ping @everyone.
 *
 * Posted with `?wait=true` (any query already on the URL, such as `thread_id`, is kept): Discord
 * then answers 200 with the created message, and without it "a message that is not saved does not
 * return an error". So a 2xx without a message (`id`) is a failed delivery, not retried (something
 * between us and Discord dropped the query or the answer; the message may be there).
 *
 * Masked links `[text](url)` are broken in titles and bodies: `\`, `[` and `]` are escaped with a
 * backslash (as discord.js's formatters do, discordjs/discord.js 178c54f9 packages/formatters/src/escapers.ts `escapeMaskedLink`
 * and `escapeEscape`), so a status message or LLM output cannot show one address and link another —
 * the Discord counterpart of Slack's escaping (slack.ts).
 *
 * A forum (or media) channel's webhook needs `thread_name` in the body (else 400, code 220001):
 * DISCORD_THREAD_NAME, or an agent's `discordThreadName`, is sent as that; each alert opens a thread.
 */
import { ChannelError, postOnce, severityLabel, type ChannelMessage, type ChannelOptions } from "./channel.ts";

export const DISCORD_MAX_CONTENT = 2000;

/** Cuts to `max` code points, ending with an ellipsis when something was cut. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** Text that can hold no masked link: backslashes first, so an escape in the text cannot undo ours. */
export function escapeDiscordLinks(text: string): string {
  return text.replace(/[\\[\]]/g, (c) => `\\${c}`);
}

interface DiscordBody {
  content: string;
  allowed_mentions: { parse: never[] };
  thread_name?: string;
}

export function formatDiscord(message: ChannelMessage, options: ChannelOptions = {}): DiscordBody {
  const text = `**[${severityLabel(message.severity)}] ${escapeDiscordLinks(message.title)}**\n${escapeDiscordLinks(message.body)}`;
  return {
    content: truncate(text, DISCORD_MAX_CONTENT),
    allowed_mentions: { parse: [] },
    ...(options.discordThreadName ? { thread_name: options.discordThreadName } : {}),
  };
}

/** The webhook URL with `wait=true`, every other query parameter as it was. */
export function discordWaitUrl(url: string): string {
  const waiting = new URL(url);
  waiting.searchParams.set("wait", "true");
  return waiting.toString();
}

export async function sendDiscord(url: string, message: ChannelMessage, timeoutMs?: number, options: ChannelOptions = {}): Promise<void> {
  const answer = await postOnce(
    "discord",
    discordWaitUrl(url),
    { headers: { "Content-Type": "application/json" }, body: JSON.stringify(formatDiscord(message, options)) },
    timeoutMs,
  );
  if (!createdMessageId(answer.text)) {
    throw new ChannelError(
      `discord: HTTP ${answer.status} without the created message (wait=true answers with it); not confirmed delivered`,
      false,
      answer.status,
    );
  }
}

function createdMessageId(text: string): string | null {
  try {
    const message = JSON.parse(text) as { id?: unknown };
    return typeof message.id === "string" && message.id !== "" ? message.id : null;
  } catch {
    return null;
  }
}
