/**
 * Token counting with gpt-tokenizer, the one measure the budget is checked with. cl100k_base, not
 * o200k_base: its rank table is half the size (the Worker bundle stays under 1 MiB gzipped), and
 * for the same text it counts at least as many tokens as o200k does on typical English and JSON,
 * so a prompt within budget by this count is within budget for o200k models too.
 * A prompt's size is the sum of its messages' sizes plus the tool schemas plus a fixed reply
 * priming, so a message's count can be stored when it is written and summed later.
 */
import { decode, encode } from "gpt-tokenizer/encoding/cl100k_base";
import type { ChatMessage, ChatTool } from "./chat-model.ts";

/** Per-message framing (role and separators), as OpenAI's chat format adds it. */
const MESSAGE_OVERHEAD = 4;
/** Tokens that prime the assistant's reply. */
const REPLY_PRIMING = 3;

// Special-token text typed by a human is ordinary text here, never a tokenizer error.
const plain = { disallowedSpecial: new Set<string>() };

export function countText(text: string): number {
  return text ? encode(text, plain).length : 0;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "object" && p && "text" in p ? String(p.text) : "")).join("");
  return "";
}

// Messages are never mutated once built (compaction makes new ones), so a count can be reused.
const counted = new WeakMap<ChatMessage, number>();

export function countMessage(message: ChatMessage): number {
  const cached = counted.get(message);
  if (cached !== undefined) return cached;
  let tokens = MESSAGE_OVERHEAD + countText(contentText(message.content));
  if (message.role === "assistant" && message.tool_calls?.length) tokens += countText(JSON.stringify(message.tool_calls));
  if (message.role === "tool") tokens += countText(message.tool_call_id);
  counted.set(message, tokens);
  return tokens;
}

export function countTools(tools: readonly ChatTool[]): number {
  return tools.length ? countText(JSON.stringify(tools)) : 0;
}

/** The size of a request as sent: messages, tool schemas and reply priming. */
export function countPrompt(messages: readonly ChatMessage[], tools: readonly ChatTool[] = []): number {
  return messages.reduce((sum, m) => sum + countMessage(m), REPLY_PRIMING) + countTools(tools);
}

/** Cuts text to at most `maxTokens`, ending with a visible marker when anything was cut. */
export function truncateToTokens(text: string, maxTokens: number, what = "text"): string {
  const tokens = encode(text, plain);
  if (tokens.length <= maxTokens) return text;
  const marker = `\n[… ${what} truncated: ${tokens.length - maxTokens} of ${tokens.length} tokens cut to fit the context budget]`;
  // Re-encoding a cut can merge differently at the seam; shrink until the result really fits.
  for (let keep = maxTokens - countText(marker) - 1; keep > 0; keep -= Math.max(2, Math.ceil(keep / 50))) {
    const cut = decode(tokens.slice(0, keep)) + marker;
    if (countText(cut) <= maxTokens) return cut;
  }
  return countText(marker) <= maxTokens ? marker : "";
}
