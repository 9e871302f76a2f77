/**
 * The model-output cap (LLM_OUTPUT_MAX_CHARS): a reply over it is cut before it is kept, counted
 * or stored, ends with a marker saying so, and the run records outputCut; a tool call whose
 * arguments are over it is not parsed or run (its result tells the model the limit) and nothing
 * it asked for is stored. The token-count thread that cannot answer in time is refused after its
 * deadline (the text estimated, never counted on the event loop) and replaced at most MAX_RESTARTS
 * times.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { agentFixture, say } from "../support/agent-fixture.ts";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import { llmCalls, messages, notifications } from "../../schema/index.ts";
import { MAX_RESTARTS, TokenizeUnavailable, TokenWorker } from "../../functions/host/token-worker.ts";
import { countText, estimateTokens, precount, truncateToTokensOffThread } from "../../agent/prompt/tokens.ts";
import { stuckThread } from "../support/token-threads.ts";
import type { Logger } from "../../runtime/log.ts";

const llms: ScriptedLlm[] = [];
const workers: TokenWorker[] = [];
afterEach(async () => {
  await Promise.all(llms.splice(0).map((l) => l.close()));
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

async function fixture(max: number) {
  const llm = await new ScriptedLlm().start();
  llms.push(llm);
  return { ...(await agentFixture({ llm, vars: { LLM_OUTPUT_MAX_CHARS: String(max) } })), llm };
}

describe("model output over LLM_OUTPUT_MAX_CHARS", () => {
  it("a long reply is cut before it is stored, says so, and the run records outputCut", async () => {
    const { llm, deps } = await fixture(1000);
    llm.push({ text: "a".repeat(50_000) });
    const run = await say(deps, "status?");
    expect(run).toMatchObject({ status: "succeeded", outputCut: true });
    expect(run.reply!.startsWith("a".repeat(1000))).toBe(true);
    expect(run.reply).not.toContain("a".repeat(1001));
    expect(run.reply).toContain("reply cut: it was over 1000 characters");
    const stored = await deps.db.select().from(messages).where(eq(messages.role, "assistant"));
    expect(stored.every((m) => m.content.length < 1200)).toBe(true);
    // The transcript keeps the answer as cut, not the 50 000 characters.
    const [call] = await deps.db.select().from(llmCalls);
    expect(JSON.stringify(call!.response).length).toBeLessThan(5000);
  });

  it("a reply within the cap is untouched and outputCut stays false", async () => {
    const { llm, deps } = await fixture(1000);
    llm.push({ text: "all instances are fine" });
    expect(await say(deps, "status?")).toMatchObject({ reply: "all instances are fine", outputCut: false });
  });

  it("a tool call with arguments over the cap is not run: the model is told the limit, nothing is stored", async () => {
    const { llm, deps } = await fixture(1000);
    llm.push(
      { tools: [{ name: "notify_human", arguments: { title: "big", body: "b".repeat(3000), severity: "info" } }] },
      { text: "sorry" },
    );
    const run = await say(deps, "tell someone");
    expect(run).toMatchObject({ status: "succeeded", outputCut: true, reply: "sorry" });
    expect(await deps.db.select().from(notifications)).toEqual([]);
    const toolMessage = llm.requests[1]!.messages.find((m) => m.role === "tool")!;
    expect(JSON.parse(toolMessage.content!).error).toMatch(/arguments were over 1000 characters/);
    // History keeps arguments every strict server accepts (the scripted server checks them).
    expect(llm.requests[1]!.messages.find((m) => m.tool_calls)!.tool_calls![0]!.function.arguments).toBe("{}");
  });
});

function recordingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => {}, error: (message) => errors.push(message) };
}

describe("token counting that cannot finish in time", () => {
  it("is refused after the deadline and estimated, never counted in place; the thread is replaced at most MAX_RESTARTS times", {
    timeout: 30_000,
  }, async () => {
    const log = recordingLog();
    const worker = new TokenWorker(log, stuckThread, 100);
    workers.push(worker);
    const long = `${"z".repeat(5000)} unique ${Date.now()}`;
    await expect(worker.tokenize([long])).rejects.toBeInstanceOf(TokenizeUnavailable);
    expect(worker.restarts).toBe(1);
    // precount learns the estimate, so countText does not tokenize it on the event loop.
    await precount([long], worker);
    expect(countText(long)).toBe(estimateTokens(long));
    const cut = await truncateToTokensOffThread(`${long} more`, 100, "reply", worker);
    expect(cut.length).toBeLessThan(400);
    expect(cut).toContain("reply truncated");
    expect(worker.restarts).toBe(MAX_RESTARTS);
    expect(worker.alive).toBe(false);
    // Stopped: a long text is refused at once (no thread, no in-place count), a short one counted in place.
    await expect(worker.tokenize(["y".repeat(40_000)])).rejects.toBeInstanceOf(TokenizeUnavailable);
    expect((await worker.tokenize(["short text"]))[0]!.length).toBe(countText("short text"));
    expect(worker.restarts).toBe(MAX_RESTARTS);
    expect(log.errors.filter((e) => /stopped/.test(e))).toHaveLength(1);
  });
});
