/**
 * The budget guarantee: before every LLM call the whole request (system prompt, memory, fleet
 * snapshot, summary, history, this run's input and turns, tool schemas) is measured, and while
 * it is over budget the compaction strategies run in order: stub old tool outputs, drop no-op
 * turns, summarise the oldest turns (persisted), trim the oldest turns, and at last cut this
 * run's latest tool outputs, the summary (for that call only) and the input with a visible marker (a cut data block is closed). What was done is reported per call.
 * A failed summary is reported and trimming takes over; nothing is skipped silently.
 * History also has its own share (`historyMax`, as the snapshot has): past it, the oldest turns
 * are summarised (or, failing that, trimmed) even under budget, so every call of a long session
 * costs about what a fresh session's does instead of growing until the budget.
 */
import type { ChatMessage, ChatTool } from "../llm/chat-model.ts";
import { chooseTurnsToSummarize, stubToolOutputs, truncateToolOutputs, type Summarize } from "./compaction.ts";
import { countMessage, countPrompt, countTools, truncateToTokens } from "./tokens.ts";
import { dataBlock, fitDataInPlace } from "./prompt-data.ts";
import type { Turn } from "./turns.ts";

export interface PromptDraft {
  /** System prompt, then pinned memory and the fleet snapshot; already capped when built. */
  fixed: ChatMessage[];
  /** The epoch's persisted summary of older turns. */
  summary: string;
  /** Stored turns of the epoch after the summary, oldest first. */
  history: Turn[];
  /** This run's events and due wakes. */
  input: ChatMessage;
  /** This run's tool rounds so far. */
  current: Turn[];
  /** The most tokens the stored history may take (agent/prompt/prompt.ts PROMPT_SHARES.history); unset: no share of its own. */
  historyMax?: number;
  /** The most tokens history may take sent as stored, stubs included (PROMPT_SHARES.historyVerbatim): past it, its tool outputs and snapshots are stubbed; unset: historyMax. */
  historyVerbatimMax?: number;
}

export interface FitReport {
  budget: number;
  before: number;
  after: number;
  stubbedToolOutputs: number;
  droppedNoopTurns: number;
  summarized: { turns: number; through: number } | null;
  summaryError?: string;
  trimmedTurns: number;
  truncatedToolOutputs: boolean;
  truncatedInput: boolean;
  /** The summary was cut (or left out) for this call: nothing else was left to cut before the input. */
  truncatedSummary?: true;
}

export interface FittedPrompt {
  messages: ChatMessage[];
  tokens: number;
  report: FitReport;
}

export class BudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BudgetError";
  }
}

const REPLY_PRIMING = countPrompt([]);
/** After summarising, aim this far under the budget so the next calls and runs do not redo it. */
const SUMMARY_TARGET = 0.7;
/** The most of the budget one summarisation request may carry as transcript. */
const SUMMARY_INPUT_SHARE = 0.5;
/** Past its share, history is folded down to this part of it, so folding is not redone every call. */
const HISTORY_TARGET = 0.25;

// The budget measures the draft after every step of compaction: one message object per summary
// text lets countMessage count a summary of thousands of tokens once, not at every measure.
let lastSummary: { summary: string; messages: ChatMessage[] } = { summary: "", messages: [] };

export function summaryMessage(summary: string): ChatMessage[] {
  if (summary !== lastSummary.summary) {
    // The summariser read the data blocks of the turns it folded, so its text is data too.
    const content = `Summary of the earlier conversation in this session:\n${dataBlock("summary", [summary])}`;
    lastSummary = { summary, messages: summary ? [{ role: "system", content }] : [] };
  }
  return lastSummary.messages;
}

/**
 * Folds the oldest stored turns, about `toFree` tokens of them, into the epoch's summary
 * (persisted by `summarize`): `draft` and this call's `work` both lose them. A failed summary is
 * reported and changes nothing (the caller trims instead).
 */
async function foldOldest(
  draft: PromptDraft,
  work: PromptDraft,
  toFree: number,
  budget: number,
  summarize: Summarize | null,
  report: FitReport,
): Promise<void> {
  if (!summarize || toFree <= 0 || !draft.history.some((t) => t.lastId !== null)) return;
  // The summariser reads turns as the prompt sends them past history's share: stubbed.
  const stubbedHistory = draft.history.map((t) => stubToolOutputs(t) ?? t);
  const count = chooseTurnsToSummarize(stubbedHistory, toFree, Math.floor(budget * SUMMARY_INPUT_SHARE));
  if (count === 0) return;
  const folded = stubbedHistory.slice(0, count);
  try {
    const summary = await summarize(folded, draft.summary);
    const through = Math.max(...folded.map((t) => t.lastId ?? 0));
    draft.summary = summary;
    draft.history = draft.history.slice(count);
    work.summary = summary;
    work.history = work.history.filter((t) => (t.lastId ?? Infinity) > through);
    report.summarized = { turns: (report.summarized?.turns ?? 0) + count, through };
  } catch (err) {
    report.summaryError = err instanceof Error ? err.message : String(err);
  }
}

export function assemble(draft: PromptDraft): ChatMessage[] {
  return [
    ...draft.fixed,
    ...summaryMessage(draft.summary),
    ...draft.history.flatMap((t) => t.messages),
    draft.input,
    ...draft.current.flatMap((t) => t.messages),
  ];
}

function measure(draft: PromptDraft, toolTokens: number): number {
  const sum = (ms: ChatMessage[]) => ms.reduce((s, m) => s + countMessage(m), 0);
  const turns = (ts: Turn[]) => ts.reduce((s, t) => s + t.tokens, 0);
  return (
    REPLY_PRIMING +
    toolTokens +
    sum(draft.fixed) +
    sum(summaryMessage(draft.summary)) +
    turns(draft.history) +
    countMessage(draft.input) +
    turns(draft.current)
  );
}

/**
 * Fits the draft into `budget` tokens and returns the messages to send. `draft` is updated in
 * place where the change must outlast this call (a persisted summary replaces the turns it
 * folded); the other strategies apply to this request only. Throws BudgetError only when the
 * fixed part and tool schemas alone cannot fit.
 */
export async function fitPrompt(
  draft: PromptDraft,
  tools: readonly ChatTool[],
  budget: number,
  summarize: Summarize | null,
): Promise<FittedPrompt> {
  const toolTokens = countTools(tools);
  const report: FitReport = {
    budget,
    before: measure(draft, toolTokens),
    after: 0,
    stubbedToolOutputs: 0,
    droppedNoopTurns: 0,
    summarized: null,
    trimmedTurns: 0,
    truncatedToolOutputs: false,
    truncatedInput: false,
  };
  const work: PromptDraft = { ...draft, history: [...draft.history], current: [...draft.current] };
  const over = () => measure(work, toolTokens) - budget;

  // 0. History past its verbatim share: its tool outputs and earlier snapshots become stubs, all
  // at once (a stable point: the requests after it extend each other again); past its own share
  // as stubbed, the oldest turns are folded into the summary, else trimmed. Within the verbatim
  // share history is sent as stored, so a provider's prompt cache serves it at a run boundary.
  const historyTokens = () => work.history.reduce((s, t) => s + t.tokens, 0);
  if (draft.historyMax !== undefined && historyTokens() > (draft.historyVerbatimMax ?? draft.historyMax)) {
    work.history = work.history.map((t) => {
      const stubbed = stubToolOutputs(t);
      if (stubbed) report.stubbedToolOutputs++;
      return stubbed ?? t;
    });
    if (historyTokens() > draft.historyMax) {
      await foldOldest(draft, work, historyTokens() - Math.floor(draft.historyMax * HISTORY_TARGET), budget, summarize, report);
      while (historyTokens() > draft.historyMax && work.history.length > 0) {
        work.history.shift();
        report.trimmedTurns++;
      }
    }
  }

  // 1. Stub old tool outputs: history first, then this run's rounds except the latest.
  const stubbable: [Turn[], number][] = [
    ...work.history.map((_, i): [Turn[], number] => [work.history, i]),
    ...work.current.slice(0, -1).map((_, i): [Turn[], number] => [work.current, i]),
  ];
  for (const [list, i] of stubbable) {
    if (over() <= 0) break;
    const stubbed = stubToolOutputs(list[i]!);
    if (stubbed) {
      list[i] = stubbed;
      report.stubbedToolOutputs++;
    }
  }
  // 2. Drop no-op turns (read-only tool exchanges) of the history, oldest first.
  for (let i = 0; i < work.history.length && over() > 0; ) {
    if (work.history[i]!.readOnly) {
      work.history.splice(i, 1);
      report.droppedNoopTurns++;
    } else i++;
  }
  // 3. Summarise the oldest stored turns into the epoch's summary (from their full text).
  if (over() > 0) await foldOldest(draft, work, measure(work, toolTokens) - Math.floor(budget * SUMMARY_TARGET), budget, summarize, report);
  // 4. Trim the oldest turns: history, then this run's rounds except the latest.
  while (over() > 0 && work.history.length > 0) {
    work.history.shift();
    report.trimmedTurns++;
  }
  while (over() > 0 && work.current.length > 1) {
    work.current.shift();
    report.trimmedTurns++;
  }
  // 5. Last resort: cut this run's latest tool outputs, then the summary, then the input, with visible markers.
  const last = work.current.length - 1;
  if (over() > 0 && last >= 0) {
    work.current[last] = truncateToolOutputs(work.current[last]!, work.current[last]!.tokens - over());
    report.truncatedToolOutputs = true;
  }
  // The summary is older context than this run's input: cut it, for this call only, before the input.
  if (over() > 0 && work.summary) {
    const keep = countMessage(summaryMessage(work.summary)[0]!) - over() - 16;
    work.summary = keep >= 32 ? truncateToTokens(work.summary, keep, "summary") : "";
    // Escaped inside its data block, the cut text can count a few tokens more than it was cut to:
    // then the summary goes for this call, still before any of the input.
    if (over() > 0) work.summary = "";
    report.truncatedSummary = true;
  }
  if (over() > 0 && typeof work.input.content === "string") {
    const room = countMessage(work.input) - over() - 4;
    work.input = { role: "user", content: fitDataInPlace(work.input.content, Math.max(0, room), "input") };
    report.truncatedInput = true;
  }

  // The request is counted again as sent, message by message (the history by the counts stored
  // with it, agent/prompt/turns.ts; everything built in this run as measured when it was built).
  let messages = assemble(work);
  let tokens = countPrompt(messages, tools);
  while (tokens > budget && work.history.length > 0) {
    work.history.shift();
    report.trimmedTurns++;
    messages = assemble(work);
    tokens = countPrompt(messages, tools);
  }
  if (tokens > budget) {
    throw new BudgetError(
      `the prompt cannot fit the budget: ${tokens} tokens after compaction, budget ${budget} (system prompt, memory, fleet snapshot and tool schemas are too large)`,
    );
  }
  report.after = tokens;
  return { messages, tokens, report };
}
