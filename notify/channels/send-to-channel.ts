/** Picks the sender for a channel name, so delivery code never switches on channels itself. */
import type { ChannelMessage, ChannelName, ChannelOptions } from "./channel.ts";
import { sendDiscord } from "./discord.ts";
import { sendNtfy } from "./ntfy.ts";
import { sendSlack } from "./slack.ts";

const SENDERS: Record<ChannelName, (url: string, message: ChannelMessage, timeoutMs?: number, options?: ChannelOptions) => Promise<void>> =
  {
    slack: sendSlack,
    discord: sendDiscord,
    ntfy: sendNtfy,
  };

export function sendToChannel(
  channel: ChannelName,
  url: string,
  message: ChannelMessage,
  timeoutMs?: number,
  options: ChannelOptions = {},
): Promise<void> {
  return SENDERS[channel](url, message, timeoutMs, options);
}
