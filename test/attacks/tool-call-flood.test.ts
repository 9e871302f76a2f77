/**
 * Attack: a hijacked model (or a hostile OpenAI-compatible endpoint) answers with a tool call
 * whose `id` is 256 KiB of one character (gpt-tokenizer is quadratic on such runs: counted on the
 * event loop it stalled /healthz for 30 s) and with 20,000 tool calls in one message (each run,
 * answered and stored, then sent back in history), to stall the host (issue #37 item 8).
 * Guard: agent/llm/output-cap.ts caps each reply as it arrives: a tool-call id over
 * MAX_TOOL_CALL_ID_CHARS is replaced by one the run generates, and at most MAX_TOOL_CALLS_PER_REPLY
 * calls run; one more call stands for the rest and is answered with an error the model can act on,
 * saying how many were not run; the run records outputCut. Tool-call ids are counted off the event
 * loop with the message texts (agent/prompt/tokens.ts messageTexts).
 */
import { describe, expect, it } from "vitest";
import { actions } from "../../schema/index.ts";
import { MAX_TOOL_CALL_ID_CHARS, MAX_TOOL_CALLS_PER_REPLY } from "../../agent/llm/output-cap.ts";
import { agentFixture, say, scriptedLlm } from "../agent/harness.ts";

/** The longest the event loop went without running a 10 ms timer while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = Date.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    const result = await work();
    return { result, stallMs: Math.max(stallMs, Date.now() - last) };
  } finally {
    clearInterval(timer);
  }
}

describe("a flood of tool calls in one reply", () => {
  it("a 256 KiB id and 20,000 calls: the run finishes, bounded calls run, the rest refused and counted", { timeout: 60_000 }, async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    const hugeId = "x".repeat(256 * 1024);
    llm.push(
      {
        tools: [
          { name: "get_instance", arguments: { instance_id: "sim-1" }, id: hugeId },
          ...Array.from({ length: 19_999 }, (_, i) => ({
            name: "reboot_instance",
            arguments: { instance_id: "sim-2", reason: `flood ${i}` },
            id: `flood_${i}`,
          })),
        ],
      },
      { text: "Done." },
    );

    const { result: run, stallMs } = await longestStall(() => say(deps, "check sim-1"));
    expect(run).toMatchObject({ status: "succeeded", decider: "llm", reply: "Done.", outputCut: true });
    // The event loop kept turning: no stall anywhere near the 30 s the attack caused.
    expect(stallMs).toBeLessThan(3_000);

    const sent = llm.requests[1]!.messages;
    const assistant = sent.find((m) => m.role === "assistant" && m.tool_calls?.length)!;
    expect(assistant.tool_calls!.length).toBe(MAX_TOOL_CALLS_PER_REPLY + 1);
    expect(assistant.tool_calls!.every((c) => c.id.length <= MAX_TOOL_CALL_ID_CHARS)).toBe(true);
    expect(JSON.stringify(llm.requests[1])).not.toContain("x".repeat(100));
    const results = sent.filter((m) => m.role === "tool");
    expect(results).toHaveLength(MAX_TOOL_CALLS_PER_REPLY + 1);
    const refusedRest = JSON.parse(results.at(-1)!.content!) as { error: string };
    expect(refusedRest.error).toContain(`at most ${MAX_TOOL_CALLS_PER_REPLY}`);
    expect(refusedRest.error).toContain(`${20_000 - MAX_TOOL_CALLS_PER_REPLY} calls`);
    // The huge-id call itself ran, under a generated id.
    expect(results[0]!.content).toContain("sim-1");
    expect((await deps.db.select().from(actions)).length).toBeLessThanOrEqual(MAX_TOOL_CALLS_PER_REPLY);
  });
});
