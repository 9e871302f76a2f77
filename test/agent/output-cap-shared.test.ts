/**
 * The cap on tool-call arguments (LLM_OUTPUT_MAX_CHARS) is one budget for all the calls of one
 * reply, not one per call: many calls each under the cap cannot add up past it. Pinned on
 * capCompletion itself and through a run, where the call past the shared budget is not executed.
 */
import { describe, expect, it } from "vitest";
import { capCompletion } from "../../agent/llm/output-cap.ts";
import type { ChatCompletion } from "../../agent/llm/chat-model.ts";
import { notifications } from "../../schema/index.ts";
import { agentFixture, say, scriptedLlm } from "./harness.ts";

function completionWithCalls(argumentLengths: number[]): ChatCompletion {
  const tool_calls = argumentLengths.map((n, i) => ({
    id: `c${i}`,
    type: "function" as const,
    function: { name: "notify_human", arguments: "x".repeat(n) },
  }));
  return {
    id: "cmpl",
    object: "chat.completion",
    created: 0,
    model: "m",
    choices: [
      { index: 0, finish_reason: "tool_calls", logprobs: null, message: { role: "assistant", content: null, refusal: null, tool_calls } },
    ],
  };
}

describe("the tool-call argument cap is shared by one reply's calls", () => {
  it("a call each under the cap is cut once the reply's calls together pass it; what is kept stays within the cap", () => {
    const capped = capCompletion(completionWithCalls([400, 400, 400, 150]), 1000);
    expect(capped.cut).toBe(true);
    expect([...capped.cutCalls]).toEqual([2]);
    const args = capped.completion.choices[0]!.message.tool_calls!.map((c) => (c.type === "function" ? c.function.arguments.length : -1));
    // The cut call becomes "{}"; the last one fits in the room the kept ones left (1000 - 800).
    expect(args).toEqual([400, 400, 2, 150]);
  });

  it("calls that together fit are untouched", () => {
    const completion = completionWithCalls([500, 500]);
    expect(capCompletion(completion, 1000)).toEqual({ completion, cut: false, cutCalls: new Set(), droppedCalls: 0 });
  });

  it("in a run, the call past the shared budget is not executed and the run records outputCut", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { LLM_OUTPUT_MAX_CHARS: "1000" } });
    const note = (title: string) => ({ name: "notify_human", arguments: { title, body: "b".repeat(350), severity: "info" } });
    llm.push({ tools: [note("first"), note("second"), note("third")] }, { text: "told" });
    const run = await say(deps, "tell someone three times");
    expect(run).toMatchObject({ status: "succeeded", outputCut: true });
    expect((await deps.db.select().from(notifications)).map((n) => n.title)).toEqual(["first", "second"]);
    const results = llm.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content!);
    expect(results).toHaveLength(3);
    expect(JSON.parse(results[2]!).error).toMatch(/arguments were over 1000 characters/);
  });
});
