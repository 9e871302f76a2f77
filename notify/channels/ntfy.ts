/**
 * ntfy: the body POSTed as plain text to the topic URL, with `Title` and `Priority` headers
 * (1 min … 5 urgent). HTTP headers carry ASCII only, so a title with other characters is sent as
 * an RFC 2047 encoded word, which ntfy decodes.
 *
 * ntfy keeps a body as the message only while it is valid UTF-8 and under its 4,096-byte message
 * limit; a body that reaches the limit (exactly 4,096 bytes included: binwiederhier/ntfy
 * server/server.go `handlePublishBody`, util/peek.go `LimitReached = read == limit`) is stored as
 * an `attachment.txt` instead, which a phone shows as a file, not as the alert. So the body is cut
 * to 4,095 bytes on a character boundary, ending with a visible marker.
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

/** The most bytes a body may have and still be an ntfy message (its limit is 4,096, exclusive). */
export const NTFY_MAX_BODY_BYTES = 4095;
export const NTFY_CUT_MARKER = "\n… [cut: longer than ntfy's 4,096-byte message limit]";

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/** Cuts `text` to at most `maxBytes` of UTF-8, on a code point boundary, ending with the marker. */
export function cutToUtf8Bytes(text: string, maxBytes: number, marker = NTFY_CUT_MARKER): string {
  let total = 0;
  for (const char of text) total += utf8Length(char.codePointAt(0)!);
  if (total <= maxBytes) return text;
  const room = maxBytes - new TextEncoder().encode(marker).length;
  let used = 0;
  let kept = "";
  for (const char of text) {
    const size = utf8Length(char.codePointAt(0)!);
    if (used + size > room) break;
    used += size;
    kept += char;
  }
  return kept + marker;
}

export function formatNtfy(message: ChannelMessage): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      Title: encodeHeaderText(message.title),
      Priority: PRIORITY[message.severity],
      Tags: TAGS[message.severity],
      // ntfy's action buttons (https://docs.ntfy.sh/publish/#action-buttons, header form
      // "view, <label>, <url>"): an approval opens its page.
      ...(message.approval && /^https?:\/\//.test(message.approval.url) ? { Actions: `view, Open approval, ${message.approval.url}` } : {}),
    },
    body: cutToUtf8Bytes(message.body, NTFY_MAX_BODY_BYTES),
  };
}

export async function sendNtfy(url: string, message: ChannelMessage, timeoutMs?: number): Promise<void> {
  await postOnce("ntfy", url, formatNtfy(message), timeoutMs);
}
