/**
 * Token counting with gpt-tokenizer, the one measure the budget is checked with. cl100k_base, not
 * o200k_base: its rank table is half the size (the Worker bundle stays under 1 MiB gzipped), and
 * for the same text it counts at least as many tokens as o200k does on typical English and JSON,
 * so a prompt within budget by this count is within budget for o200k models too.
 * A prompt's size is the sum of its messages' sizes plus the tool schemas plus a fixed reply
 * priming, so a message's count can be stored when it is written and summed later.
 *
 * Tokenizing a large prompt takes tens of milliseconds of CPU; on a host with a TokenCounter (the
 * Node host's worker thread) `precount` and `truncateToTokensOffThread` do that work off the event
 * loop and leave the counts where the synchronous functions below find them. Without one (the
 * Worker) everything is counted in place, as before; the counts are the same either way. What
 * the counter cannot count in time (it refuses: a missed deadline, a stopped thread and a long
 * text) is estimated, never counted on the event loop: ESTIMATE_CHARS_PER_TOKEN characters per
 * token, kept as that text's count and noted in `estimatedTexts`. Model output is cut to
 * LLM_OUTPUT_MAX_CHARS before it gets here (agent/llm/output-cap.ts), so the Worker's in-place
 * counting is bounded too.
 */
import { decode, encode } from "gpt-tokenizer/encoding/cl100k_base";
import type { TokenCounter } from "../deps.ts";
import type { ChatMessage, ChatTool } from "../llm/chat-model.ts";

/** Per-message framing (role and separators), as OpenAI's chat format adds it. */
const MESSAGE_OVERHEAD = 4;
/** Tokens that prime the assistant's reply. */
const REPLY_PRIMING = 3;

// Special-token text typed by a human is ordinary text here, never a tokenizer error.
const plain = { disallowedSpecial: new Set<string>() };

/** The tokens of each text, counted in place: what a TokenCounter answers, without a thread. */
export function tokenizeInProcess(texts: readonly string[]): Uint32Array[] {
  return texts.map((text) => Uint32Array.from(text ? encode(text, plain) : []));
}

/** Texts shorter than this are counted in place: that costs less than a trip to the thread. */
export const OFF_THREAD_MIN_CHARS = 2000;
/** The most characters of text whose counts are kept; the oldest are forgotten first. */
export const KNOWN_COUNTS_MAX_CHARS = 4_000_000;
// Counts made off the event loop, by text, so the synchronous counts below need not tokenize.
const known = new Map<string, number>();
let knownChars = 0;

function learn(text: string, tokens: number): void {
  if (known.has(text) || text.length > KNOWN_COUNTS_MAX_CHARS) return;
  known.set(text, tokens);
  knownChars += text.length;
  for (const oldest of known.keys()) {
    if (knownChars <= KNOWN_COUNTS_MAX_CHARS) break;
    known.delete(oldest);
    knownChars -= oldest.length;
  }
}

/** The estimate of a text the counter could not count: characters per token. */
export const ESTIMATE_CHARS_PER_TOKEN = 3;
export const estimateTokens = (text: string) => Math.ceil(text.length / ESTIMATE_CHARS_PER_TOKEN);
/** Texts whose count is an estimate, over the host's life (a diagnostic: tests and logs read it). */
export let estimatedTexts = 0;

/** Asks the counter; a refusal (deadline, stopped thread) answers null: the caller estimates. */
async function tokenizeOrNull(counter: TokenCounter, texts: readonly string[]): Promise<Uint32Array[] | null> {
  try {
    return await counter.tokenize(texts);
  } catch {
    estimatedTexts += texts.length;
    return null;
  }
}

export function countText(text: string): number {
  if (!text) return 0;
  return known.get(text) ?? encode(text, plain).length;
}

/**
 * Counts the long texts among `texts` on `counter`, off the event loop, so that countText,
 * countMessage and countPrompt find them. Without a counter it does nothing (they count in place).
 */
export async function precount(texts: Iterable<string>, counter: TokenCounter | undefined): Promise<void> {
  if (!counter) return;
  const wanted = [...new Set(texts)].filter((t) => t.length >= OFF_THREAD_MIN_CHARS && !known.has(t));
  if (wanted.length === 0) return;
  const tokens = await tokenizeOrNull(counter, wanted);
  wanted.forEach((text, i) => learn(text, tokens ? tokens[i]!.length : estimateTokens(text)));
}

/** The texts countMessage tokenizes for each message (to precount them). */
export function messageTexts(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((m) => [
    contentText(m.content),
    ...(m.role === "assistant" && m.tool_calls?.length ? [JSON.stringify(m.tool_calls)] : []),
    // countMessage counts a tool result's id too: precounted with the rest, never on the loop.
    ...(m.role === "tool" ? [m.tool_call_id] : []),
  ]);
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

/**
 * Records the count a message had when it was stored (`messages.tokens`, measured by
 * countMessage as it was written), so counting the history again costs nothing. Only for a
 * message rebuilt exactly as it was counted (agent/prompt/turns.ts checks that).
 */
export function withStoredCount(message: ChatMessage, tokens: number): ChatMessage {
  counted.set(message, tokens);
  return message;
}

// The tool schemas are one constant array per host, sent with every call: counted once.
const toolCounts = new WeakMap<readonly ChatTool[], number>();

export function countTools(tools: readonly ChatTool[]): number {
  if (!tools.length) return 0;
  let tokens = toolCounts.get(tools);
  if (tokens === undefined) toolCounts.set(tools, (tokens = countText(JSON.stringify(tools))));
  return tokens;
}

/** The size of a request as sent: messages, tool schemas and reply priming. */
export function countPrompt(messages: readonly ChatMessage[], tools: readonly ChatTool[] = []): number {
  return messages.reduce((sum, m) => sum + countMessage(m), REPLY_PRIMING) + countTools(tools);
}

/** Cuts text to at most `maxTokens`, ending with a visible marker when anything was cut. */
export function truncateToTokens(text: string, maxTokens: number, what = "text"): string {
  if (known.has(text) && known.get(text)! <= maxTokens) return text;
  const tokens = encode(text, plain);
  if (tokens.length <= maxTokens) return text;
  for (const cut of cuts(tokens, maxTokens, what)) if (countText(cut) <= maxTokens) return cut;
  return fallback(tokens.length, maxTokens, what);
}

/**
 * truncateToTokens with the tokenizing done on `counter`, off the event loop: the same result.
 * Without a counter, or for a short text, it is truncateToTokens.
 */
export async function truncateToTokensOffThread(
  text: string,
  maxTokens: number,
  what: string,
  counter: TokenCounter | undefined,
): Promise<string> {
  if (!counter || text.length < OFF_THREAD_MIN_CHARS) return truncateToTokens(text, maxTokens, what);
  if (known.has(text) && known.get(text)! <= maxTokens) return text;
  const [tokens] = (await tokenizeOrNull(counter, [text])) ?? [null];
  if (!tokens) return estimatedCut(text, maxTokens, what);
  learn(text, tokens.length);
  if (tokens!.length <= maxTokens) return text;
  for (const cut of cuts(tokens!, maxTokens, what)) {
    await precount([cut], counter);
    if (countText(cut) <= maxTokens) return cut;
  }
  return fallback(tokens!.length, maxTokens, what);
}

/** A cut by the estimate, for a text that could not be tokenized in time: kept learned as estimated. */
function estimatedCut(text: string, maxTokens: number, what: string): string {
  const total = estimateTokens(text);
  if (total <= maxTokens) {
    learn(text, total);
    return text;
  }
  const mark = marker(total, maxTokens, what);
  const cut = text.slice(0, Math.max(0, (maxTokens - estimateTokens(mark) - 1) * ESTIMATE_CHARS_PER_TOKEN)) + mark;
  learn(cut, estimateTokens(cut));
  return cut;
}

function marker(total: number, maxTokens: number, what: string): string {
  return `\n[… ${what} truncated: ${total - maxTokens} of ${total} tokens cut to fit the context budget]`;
}

/** Candidate cuts, longest first: re-encoding a cut can merge differently at the seam, so each is checked. */
function* cuts(tokens: number[] | Uint32Array, maxTokens: number, what: string): Generator<string> {
  const mark = marker(tokens.length, maxTokens, what);
  for (let keep = maxTokens - countText(mark) - 1; keep > 0; keep -= Math.max(2, Math.ceil(keep / 50)))
    yield decode(tokens.slice(0, keep)) + mark;
}

function fallback(total: number, maxTokens: number, what: string): string {
  const mark = marker(total, maxTokens, what);
  return countText(mark) <= maxTokens ? mark : "";
}
