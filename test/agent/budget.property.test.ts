/**
 * Property: for random histories (sizes, tool-call pairs, read-only no-op turns, a summary, this
 * run's tool rounds, an oversized input, a summariser that works, fails or is absent) the prompt
 * sent is within the budget, counted exactly as sent, and no tool call is separated from its
 * result.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { fitPrompt, type PromptDraft } from "../../agent/prompt/budget.ts";
import { countPrompt, countTools } from "../../agent/prompt/tokens.ts";
import { CHAT_TOOLS } from "../../agent/tools/index.ts";
import { makeTurn, pairsIntact, type Turn } from "../../agent/prompt/turns.ts";
import type { ChatMessage } from "../../agent/llm/chat-model.ts";

const WORDS = ["gpu", "instance", "restart", "exited", "sim-1", "running", "notify", "the", "fleet", "ok", "42", '{"a":1}', "\n"];
/** Text of up to `max` words; the length is drawn uniformly so large turns really occur. */
const text = (max: number) =>
  fc
    .tuple(fc.integer({ min: 0, max }), fc.integer({ min: 0, max: 1000 }))
    .map(([n, seed]) => Array.from({ length: n }, (_, i) => WORDS[(seed + i * 7 + ((i * i) % 5)) % WORDS.length]).join(" "));

let ids = 0;
const callId = () => `call_${++ids}`;

const toolTurn = fc
  .record({
    readOnly: fc.boolean(),
    outputs: fc.array(text(900), { minLength: 1, maxLength: 3, size: "max" }),
    note: fc.option(text(30), { nil: null }),
  })
  .map(({ readOnly, outputs, note }) => {
    const calls = outputs.map(() => ({
      id: callId(),
      type: "function" as const,
      function: {
        name: readOnly ? "list_instances" : "reboot_instance",
        arguments: readOnly ? "{}" : '{"instance_id":"sim-1","reason":"x"}',
      },
    }));
    return [
      { role: "assistant", content: note, tool_calls: calls } as ChatMessage,
      ...calls.map((c, i): ChatMessage => ({ role: "tool", tool_call_id: c.id, content: outputs[i]! })),
    ];
  });

const turnMessages = fc.oneof(
  text(600).map((t): ChatMessage[] => [{ role: "user", content: t }]),
  text(400).map((t): ChatMessage[] => [{ role: "assistant", content: t }]),
  toolTurn,
);

const scenario = fc.record({
  budget: fc.integer({ min: 2200, max: 9000 }),
  summary: text(300),
  history: fc.array(turnMessages, { maxLength: 30, size: "max" }),
  input: text(4000),
  current: fc.array(toolTurn, { maxLength: 4, size: "max" }),
  summarizer: fc.constantFrom("works", "fails", "absent"),
});

type Seen = Record<"over" | "summarized" | "summaryFailed" | "stubbed" | "dropped" | "trimmed" | "truncated", number>;

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** One scenario's checks; `seen` counts which strategies it exercised. */
async function holds(s: Scenario, seen: Seen): Promise<void> {
  let id = 0;
  const history: Turn[] = s.history.map((ms) => makeTurn(ms, (id += ms.length)));
  const draft: PromptDraft = {
    fixed: [
      { role: "system", content: "You supervise a GPU fleet." },
      { role: "system", content: "Fleet snapshot: sim-1 running." },
    ],
    summary: s.summary,
    history,
    input: { role: "user", content: `Run 1. Woken by: ${s.input}` },
    current: s.current.map((ms) => makeTurn(ms)),
  };
  const summarize =
    s.summarizer === "absent"
      ? null
      : async () => {
          if (s.summarizer === "fails") throw new Error("summariser down");
          return "Earlier: sim-1 was restarted twice.";
        };
  const fitted = await fitPrompt(draft, CHAT_TOOLS, s.budget, summarize);
  expect(fitted.tokens).toBeLessThanOrEqual(s.budget);
  expect(countPrompt(fitted.messages, CHAT_TOOLS)).toBe(fitted.tokens);
  expect(pairsIntact(fitted.messages)).toBe(true);
  // The fixed part and this run's input are always there; the latest tool round too.
  expect(fitted.messages.slice(0, 2)).toEqual(draft.fixed);
  expect(fitted.messages.some((m) => m.role === "user" && String(m.content).startsWith("Run 1."))).toBe(true);
  const lastRound = draft.current.at(-1);
  if (lastRound)
    expect(fitted.messages.at(-1)).toMatchObject({
      role: "tool",
      tool_call_id: (lastRound.messages.at(-1) as { tool_call_id: string }).tool_call_id,
    });
  if (fitted.report.summaryError) expect(s.summarizer).toBe("fails");
  if (fitted.report.summarized) expect(draft.summary).toBe("Earlier: sim-1 was restarted twice.");
  seen.over += Number(fitted.report.before > s.budget);
  seen.summarized += Number(fitted.report.summarized !== null);
  seen.summaryFailed += Number(fitted.report.summaryError !== undefined);
  seen.stubbed += Number(fitted.report.stubbedToolOutputs > 0);
  seen.dropped += Number(fitted.report.droppedNoopTurns > 0);
  seen.trimmed += Number(fitted.report.trimmedTurns > 0);
  seen.truncated += Number(fitted.report.truncatedInput || fitted.report.truncatedToolOutputs);
  expect(fitted.report.after).toBe(fitted.tokens);
}

describe("fitPrompt property", () => {
  it("never exceeds the budget and never separates a tool call from its result", async () => {
    const seen: Seen = { over: 0, summarized: 0, summaryFailed: 0, stubbed: 0, dropped: 0, trimmed: 0, truncated: 0 };
    await fc.assert(
      fc.asyncProperty(scenario, (s) => holds(s, seen)),
      { numRuns: 60 },
    );
    // The generated histories really exercise every strategy, not just the easy case.
    for (const [strategy, count] of Object.entries(seen)) expect(count, strategy).toBeGreaterThan(0);
  });

  it("keeps the input when a cut summary, escaped in its data block, still counts over the budget (a failing case it found)", async () => {
    const seen: Seen = { over: 0, summarized: 0, summaryFailed: 0, stubbed: 0, dropped: 0, trimmed: 0, truncated: 0 };
    await fc.assert(
      fc.asyncProperty(scenario, (s) => holds(s, seen)),
      {
        seed: 369129540,
        path: "5:0:3:0:0:2:2:0:7:0:3:0:10:10:10:11:10:12:12:12:12:16:13",
        endOnFailure: true,
      },
    );
    expect(seen.truncated).toBe(1);
  });

  it("budget floor sanity: the tool schemas alone fit the smallest budget tested", () => {
    expect(countTools(CHAT_TOOLS)).toBeLessThan(2200 - 200);
  });
});
