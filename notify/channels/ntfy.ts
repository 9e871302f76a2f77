/**
 * ntfy: the body POSTed as plain text to the topic URL, with `Title` and `Priority` headers
 * (1 min … 5 urgent). HTTP headers carry ASCII only, so a title with other characters is sent as
 * an RFC 2047 encoded word, which ntfy decodes.
 */
import { postOnce, type ChannelMessage, type Severity } from "./channel.ts";

const PRIORITY: Record<Severity, string> = { info: "3", warning: "4", critical: "5" };
const TAGS: Record<Severity, string> = { info: "information_source", warning: "warning", critical: "rotating_light" };

export function encodeHeaderText(text: string): string {
  const oneLine = text.replace(/[\r\n]+/g, " ");
  if (/^[\x20-\x7e]*$/.test(oneLine)) return oneLine;
  const bytes = new TextEncoder().encode(oneLine);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `=?UTF-8?B?${btoa(binary)}?=`;
}

export function formatNtfy(message: ChannelMessage): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      Title: encodeHeaderText(message.title),
      Priority: PRIORITY[message.severity],
      Tags: TAGS[message.severity],
    },
    body: message.body,
  };
}

export async function sendNtfy(url: string, message: ChannelMessage, timeoutMs?: number): Promise<void> {
  await postOnce("ntfy", url, formatNtfy(message), timeoutMs);
}
