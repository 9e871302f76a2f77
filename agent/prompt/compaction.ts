/**
 * The compaction strategies, in the order the budget applies them: stub old tool outputs, drop
 * no-op (read-only) turns, summarise the oldest turns into the epoch's summary, trim the oldest
 * turns. Each works on whole turns, so tool calls and results stay together. The summariser is
 * the one strategy with side effects: it calls the LLM and persists the summary in `sessions`,
 * so a later run starts from it instead of redoing it.
 */
import { lt } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import { sessions } from "../../schema/index.ts";
import type { ChatMessage } from "../llm/chat-model.ts";
import { countMessage, countPrompt, countText, truncateToTokens, truncateToTokensOffThread } from "./tokens.ts";
import { makeTurn, type Turn } from "./turns.ts";

// Every fit of a run stubs the same history turns again (it works on copies); turns are never
// mutated, so each one's stubbed form is made once.
const stubbed = new WeakMap<Turn, Turn | null>();
// Data inside the block is JSON (agent/prompt/prompt-data.ts), so its closing tag is the block's own.
const SNAPSHOT_BLOCK = /<fleet_snapshot>\n[\s\S]*?\n<\/fleet_snapshot>/;

/**
 * Replaces a turn's tool outputs (and an earlier run's fleet snapshot) by a short stub, itself a JSON value like every tool result (so
 * a stub is never mistaken for text to follow); null when there is nothing worth stubbing.
 */
export function stubToolOutputs(turn: Turn): Turn | null {
  if (stubbed.has(turn)) return stubbed.get(turn)!;
  let changed = false;
  const messages = turn.messages.map((m): ChatMessage => {
    if (m.role === "user" && typeof m.content === "string") {
      // An earlier run's input opens with that run's fleet snapshot: superseded by the newest one.
      const content = m.content.replace(SNAPSHOT_BLOCK, (block) => {
        const stub = `<fleet_snapshot>\n${JSON.stringify({ omitted: "an earlier run's snapshot; the newest one is current", tokens: countText(block) })}\n</fleet_snapshot>`;
        return countText(stub) < countText(block) ? stub : block;
      });
      if (content === m.content) return m;
      changed = true;
      return { role: "user", content };
    }
    if (m.role !== "tool" || typeof m.content !== "string") return m;
    const tokens = countText(m.content);
    const stub = JSON.stringify({
      omitted: "tool output no longer sent, to save context: call the tool again if it still matters",
      tokens,
    });
    if (tokens <= countText(stub)) return m;
    changed = true;
    return { ...m, content: stub };
  });
  const result = changed ? makeTurn(messages, turn.lastId) : null;
  stubbed.set(turn, result);
  return result;
}

/** Cuts a turn's tool outputs (equal shares, visible markers) so the whole turn fits `maxTurnTokens`. */
export function truncateToolOutputs(turn: Turn, maxTurnTokens: number): Turn {
  const outputs = turn.messages.filter((m) => m.role === "tool").map((m) => countText(typeof m.content === "string" ? m.content : ""));
  const framing = turn.tokens - outputs.reduce((a, b) => a + b, 0);
  const share = Math.max(0, Math.floor((maxTurnTokens - framing) / Math.max(1, outputs.length)));
  return makeTurn(
    turn.messages.map((m) =>
      m.role === "tool" && typeof m.content === "string" ? { ...m, content: truncateToTokens(m.content, share, "tool output") } : m,
    ),
    turn.lastId,
  );
}

/** Renders turns as a plain transcript for the summariser, each tool result kept short. */
export function renderTranscript(turns: readonly Turn[]): string {
  const lines: string[] = [];
  for (const turn of turns) {
    for (const m of turn.messages) {
      const text = typeof m.content === "string" ? m.content : "";
      if (m.role === "tool") lines.push(`tool result: ${truncateToTokens(text, 150, "result")}`);
      else if (m.role === "assistant" && m.tool_calls?.length) {
        const calls = m.tool_calls.map((c) => (c.type === "function" ? `${c.function.name}(${c.function.arguments})` : c.type));
        lines.push(`assistant called: ${calls.join(", ")}${text ? ` — ${text}` : ""}`);
      } else lines.push(`${m.role}: ${text}`);
    }
  }
  return lines.join("\n");
}

/** Oldest stored turns to fold so that about `toFree` tokens leave the prompt, within `maxInput`. */
export function chooseTurnsToSummarize(history: readonly Turn[], toFree: number, maxInput: number): number {
  let count = 0;
  let freed = 0;
  for (const turn of history) {
    if (turn.lastId === null || freed >= toFree) break;
    if (count > 0 && freed + turn.tokens > maxInput) break;
    freed += turn.tokens;
    count++;
  }
  return count;
}

export type Summarize = (turns: readonly Turn[], previous: string) => Promise<string>;

const SUMMARY_INSTRUCTIONS =
  "You maintain the running summary of an operations agent's conversation about a GPU fleet. " +
  "Merge the existing summary with the new turns into one concise summary: what humans asked and were told, " +
  "actions taken and their results, open problems, promises made. Plain text, no preamble.";

/**
 * A summariser that asks the LLM (through `complete`, which owns breaker and usage accounting)
 * and persists the merged summary for the epoch, moving `summarizedThrough` forward only.
 * Its own request is fitted to the budget like every other request.
 */
export function createSummarizer(options: {
  deps: Pick<AgentDeps, "db" | "clock" | "tokenCounter">;
  agentId: string;
  epoch: number;
  budget: number;
  summaryCap: number;
  complete: (messages: ChatMessage[]) => Promise<string>;
}): Summarize {
  const { deps, agentId, epoch, budget, summaryCap } = options;
  return async (turns, previous) => {
    const through = Math.max(...turns.map((t) => t.lastId ?? 0));
    const system: ChatMessage = { role: "system", content: `${SUMMARY_INSTRUCTIONS} At most ${summaryCap} tokens.` };
    const head = `Existing summary:\n${previous || "(none)"}\n\nNew turns:\n`;
    const room = budget - countPrompt([system, { role: "user", content: head }]) - 16;
    if (room < 64) throw new Error("no room in the budget for a summarisation request");
    const transcript = await truncateToTokensOffThread(renderTranscript(turns), room, "transcript", deps.tokenCounter);
    const request: ChatMessage[] = [system, { role: "user", content: head + transcript }];
    const answer = (await options.complete(request)).trim();
    if (!answer) throw new Error("the summariser returned an empty summary");
    const summary = truncateToTokens(answer, summaryCap, "summary");
    const summaryTokens = countMessage({ role: "system", content: summary });
    await deps.db
      .insert(sessions)
      .values({ agentId, epoch, summary, summaryTokens, summarizedThrough: through, startedAt: deps.clock.now() })
      .onConflictDoUpdate({
        target: [sessions.agentId, sessions.epoch],
        set: { summary, summaryTokens, summarizedThrough: through },
        setWhere: lt(sessions.summarizedThrough, through),
      });
    return summary;
  };
}
