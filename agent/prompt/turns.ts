/**
 * Turns: the units the budget works in. A turn is one user message, one assistant answer, or one
 * assistant tool-call message together with all of its tool results, so compaction that drops,
 * summarises or trims whole turns can never separate a tool call from its result.
 */
import type { ChatMessage } from "../llm/chat-model.ts";
import { withStorableArguments } from "../llm/tool-call-args.ts";
import { countMessage, withStoredCount } from "./tokens.ts";

export interface Turn {
  messages: ChatMessage[];
  /** Sum of the messages' token counts (stored counts for history). */
  tokens: number;
  /** Highest stored message id in the turn; null for this run's turns, not yet stored. */
  lastId: number | null;
  /** Only read-only tools ran in it: it changed nothing, and the fresh fleet snapshot supersedes it. */
  readOnly: boolean;
}

/** Tools that only read; a turn that called only these is a no-op turn. */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(["list_instances", "get_instance", "get_instance_logs"]);

export function makeTurn(messages: ChatMessage[], lastId: number | null = null, tokens?: number): Turn {
  const first = messages[0];
  const calls = first?.role === "assistant" ? (first.tool_calls ?? []) : [];
  return {
    messages,
    tokens: tokens ?? messages.reduce((sum, m) => sum + countMessage(m), 0),
    lastId,
    readOnly: calls.length > 0 && calls.every((c) => c.type === "function" && READ_ONLY_TOOLS.has(c.function.name)),
  };
}

export interface StoredMessage {
  id: number;
  role: string;
  content: string;
  toolCalls: unknown;
  toolCallId: string | null;
  tokens: number;
}

/**
 * Rebuilds turns from stored rows (oldest first); incomplete tool exchanges are left out whole.
 * Each message keeps the count stored with it (measured when it was written), so fitting the
 * prompt does not tokenize the history again; a tool call whose stored arguments had to be
 * normalised is no longer the text that was counted, and is counted afresh.
 */
export function turnsFromStored(rows: readonly StoredMessage[]): Turn[] {
  const turns: Turn[] = [];
  let i = 0;
  while (i < rows.length) {
    const row = rows[i]!;
    i++;
    if (row.role === "user")
      turns.push(makeTurn([withStoredCount({ role: "user", content: row.content }, row.tokens)], row.id, row.tokens));
    else if (row.role === "assistant" && Array.isArray(row.toolCalls) && row.toolCalls.length > 0) {
      // Rows stored before arguments were normalised may hold malformed JSON: never send it back.
      const calls = (row.toolCalls as Extract<ChatMessage, { role: "assistant" }>["tool_calls"] & object).map(withStorableArguments);
      const wanted = new Set(calls.map((c) => c.id));
      const assistant: ChatMessage = { role: "assistant", content: row.content || null, tool_calls: calls };
      const asStored = JSON.stringify(calls) === JSON.stringify(row.toolCalls);
      const messages: ChatMessage[] = [asStored ? withStoredCount(assistant, row.tokens) : assistant];
      let tokens = asStored ? row.tokens : countMessage(assistant);
      let lastId = row.id;
      while (i < rows.length && rows[i]!.role === "tool" && wanted.has(rows[i]!.toolCallId ?? "")) {
        const result = rows[i]!;
        wanted.delete(result.toolCallId!);
        messages.push(withStoredCount({ role: "tool", tool_call_id: result.toolCallId!, content: result.content }, result.tokens));
        tokens += result.tokens;
        lastId = result.id;
        i++;
      }
      if (wanted.size === 0) turns.push(makeTurn(messages, lastId, tokens));
    } else if (row.role === "assistant")
      turns.push(makeTurn([withStoredCount({ role: "assistant", content: row.content }, row.tokens)], row.id, row.tokens));
    // A tool row without its call (its call was folded into the summary) is never sent alone.
  }
  return turns;
}

/** True when every tool call is followed by its result and every result follows its call. */
export function pairsIntact(messages: readonly ChatMessage[]): boolean {
  let open = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") {
      if (!open.delete(m.tool_call_id)) return false;
      continue;
    }
    if (open.size > 0) return false;
    open = new Set(m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []);
  }
  return open.size === 0;
}
