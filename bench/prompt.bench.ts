/**
 * Prompt budget benchmark: fitting a 38,000-token epoch history into the 30,000-token budget
 * before an LLM call, with the per-message token counts stored when messages were written
 * (fleetwarden) against re-tokenizing every history message before every call.
 */
import { fitPrompt, type PromptDraft } from "../agent/prompt/budget.ts";
import type { ChatMessage } from "../agent/llm/chat-model.ts";
import { countMessage } from "../agent/prompt/tokens.ts";
import { makeTurn } from "../agent/prompt/turns.ts";
import { CHAT_TOOLS } from "../agent/tools/index.ts";
import { fmtMs, measure, type Row } from "./harness.ts";

const BUDGET = 30_000;
const words = "instance sim-3 exited with code 137 after the loader ran out of GPU memory; restarted it and scheduled a re-check ".split(
  " ",
);

function text(n: number, seed: number): string {
  return Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(" ");
}

function historyMessages(): ChatMessage[][] {
  const turns: ChatMessage[][] = [];
  for (let i = 0; turns.reduce((s, t) => s + t.reduce((a, m) => a + countMessage(m), 0), 0) < 38_000; i++) {
    turns.push([{ role: i % 2 ? "assistant" : "user", content: text(700, i) }]);
  }
  return turns;
}

function draft(turns: ChatMessage[][], storedCounts: boolean): PromptDraft {
  return {
    fixed: [{ role: "system", content: "You supervise a GPU fleet." }],
    summary: "",
    // A fresh copy of each message, so a re-count cannot hit the tokenizer's per-object cache.
    history: turns.map((t, i) => {
      const messages = t.map((m) => ({ ...m }) as ChatMessage);
      return storedCounts
        ? makeTurn(
            messages,
            i + 1,
            t.reduce((s, m) => s + countMessage(m), 0),
          )
        : makeTurn(messages, i + 1);
    }),
    input: { role: "user", content: "Events: sim-3 exited (exit code 137)." },
    current: [],
  };
}

export async function promptBench(): Promise<Row[]> {
  const turns = historyMessages();
  const summarize = async () => "Earlier: sim-3 failed twice with OOM; restarted both times.";
  let sent = 0;
  const stored = await measure("stored counts", 20, async () => {
    sent = (await fitPrompt(draft(turns, true), CHAT_TOOLS, BUDGET, summarize)).tokens;
  });
  const recount = await measure("re-tokenize", 20, () => fitPrompt(draft(turns, false), CHAT_TOOLS, BUDGET, summarize));
  return [
    {
      benchmark: "fit a 38,000-token history into 30,000 before a call",
      variant: "stored per-message counts (fleetwarden)",
      result: `${fmtMs(stored.medianMs)} · sent ${sent.toLocaleString("en")} tokens`,
      ratio: "1.00×",
    },
    {
      benchmark: "fit a 38,000-token history into 30,000 before a call",
      variant: "re-tokenize the history every call",
      result: fmtMs(recount.medianMs),
      ratio: `${(recount.medianMs / stored.medianMs).toFixed(1)}× slower`,
    },
  ];
}
