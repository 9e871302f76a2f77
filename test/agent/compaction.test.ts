/**
 * Compaction through the real pipeline: measured before every call, summary by the LLM persisted
 * in the session (so it is not redone), the predecessor's 38k-over-30k case compacted before the
 * call, and a failing summariser reported and replaced by trimming.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { sessions } from "../../schema/index.ts";
import { countMessage, countPrompt } from "../../agent/prompt/tokens.ts";
import { pairsIntact } from "../../agent/prompt/turns.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders } from "../support/test-deps.ts";
import type { ChatRequestBody } from "../support/scripted-llm.ts";
import { agentFixture, say, scriptedLlm, seedHistory } from "./harness.ts";

const size = (r: ChatRequestBody) => countPrompt(r.messages as never, (r.tools ?? []) as never);
const session = async (deps: Awaited<ReturnType<typeof agentFixture>>["deps"]) =>
  (
    await deps.db
      .select()
      .from(sessions)
      .where(and(eq(sessions.agentId, "default"), eq(sessions.epoch, 1)))
  )[0]!;

describe("compaction", () => {
  it("compacts a 38,000-token history under a 30,000 budget before the call, and persists the summary", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    const history = await seedHistory(deps, 38_000, { withToolPairs: true });
    expect(history).toBeGreaterThanOrEqual(38_000);
    llm.onSummary = () => ({ text: "Summary: sim-1 was restarted many times; throughput recovered each time." });
    llm.push({ text: "All good." });

    const run = await say(deps, "status?");

    expect(run).toMatchObject({ status: "succeeded", decider: "llm", reply: "All good." });
    for (const request of llm.requests) expect(size(request)).toBeLessThanOrEqual(30_000);
    const main = llm.requests.filter((r) => r.tools);
    expect(main).toHaveLength(1);
    expect(llm.requests.filter((r) => !r.tools).length).toBeGreaterThanOrEqual(1);
    expect(size(main[0]!)).toBeLessThanOrEqual(30_000);
    expect(pairsIntact(main[0]!.messages as never)).toBe(true);
    expect(
      main[0]!.messages.some((m) => m.role === "system" && String(m.content).includes("Summary: sim-1 was restarted many times")),
    ).toBe(true);
    const call = (run.compaction as { calls: { before: number; after: number; summarized: { through: number } | null }[] }).calls[0]!;
    // Over the budget as built (the history's old tool outputs are already stubs by then).
    expect(call.before).toBeGreaterThan(30_000);
    expect(call.after).toBe(size(main[0]!));
    expect(call.summarized).not.toBeNull();
    expect(run.contextTokens).toBeLessThanOrEqual(30_000);

    const stored = await session(deps);
    expect(stored.summary).toContain("sim-1 was restarted many times");
    expect(stored.summarizedThrough).toBe(call.summarized!.through);
    expect(stored.summaryTokens).toBeGreaterThan(0);
    const state = await (await buildApp(() => deps).request("/api/agents/default", { headers: authHeaders() })).json();
    expect(state.contextTokens).toBeLessThanOrEqual(state.contextBudget);
    expect(state.contextBudget).toBe(30_000);
  });

  it("folds history past its own share even under the budget: not below the share, and the persisted summary is reused, not redone", async () => {
    // A 150,000-token budget gives history a 3,000-token share (PROMPT_SHARES.history).
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { CONTEXT_BUDGET_TOKENS: "150000" } });
    let summaries = 0;
    llm.onSummary = () => ({ text: `Summary ${++summaries}: earlier runs restarted sim-1.` });
    await seedHistory(deps, 2_000);
    llm.push({ text: "fine" }, { text: "fine again" }, { text: "still fine" });

    const under = await say(deps, "one");
    const first = (
      under.compaction as { calls: { before: number; summarized: unknown; stubbedToolOutputs: number; trimmedTurns: number }[] }
    ).calls[0]!;
    expect(first).toMatchObject({ summarized: null, stubbedToolOutputs: 0, trimmedTurns: 0 });
    expect(summaries).toBe(0);

    await seedHistory(deps, 6_000, { startRun: 5000 });
    const over = await say(deps, "two");
    const second = (over.compaction as { calls: { before: number; summarized: unknown }[] }).calls[0]!;
    expect(second.before).toBeLessThan(150_000);
    expect(second.summarized).not.toBeNull();
    expect(summaries).toBe(1);
    const through = (await session(deps)).summarizedThrough;
    expect(through).toBeGreaterThan(0);
    const sent = llm.requests.filter((r) => r.tools).at(-1)!;
    const historyTokens = sent.messages
      .filter((m) => m.role !== "system")
      .slice(0, -1)
      .reduce((sum, m) => sum + countMessage(m as never), 0);
    expect(historyTokens).toBeLessThanOrEqual(3_000);

    // The next run starts from the persisted summary: no summariser call, no folded turns resent.
    await say(deps, "three");
    expect(summaries).toBe(1);
    const third = llm.requests.filter((r) => r.tools).at(-1)!;
    expect(third.messages.some((m) => String(m.content).includes("Summary 1: earlier runs restarted sim-1."))).toBe(true);
  });

  it("a failing summariser is recorded and trimming keeps the request within budget", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { CONTEXT_BUDGET_TOKENS: "6000" } });
    await seedHistory(deps, 9_000);
    llm.onSummary = () => ({ status: 500, message: "summariser overloaded" });
    llm.push({ text: "answered anyway" });

    const run = await say(deps, "status?");

    expect(run).toMatchObject({ status: "succeeded", decider: "llm", reply: "answered anyway" });
    const call = (run.compaction as { calls: { summaryError?: string; trimmedTurns: number; summarized: unknown }[] }).calls[0]!;
    expect(call.summaryError).toMatch(/summariser overloaded|500/);
    expect(call.summarized).toBeNull();
    expect(call.trimmedTurns).toBeGreaterThan(0);
    expect(run.error).toMatch(/compaction could not summarise/);
    expect(size(llm.requests.filter((r) => r.tools)[0]!)).toBeLessThanOrEqual(6000);
    expect((await session(deps)).summary).toBe("");
  });

  it("truncates a single input too large to fit, with a visible marker", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { CONTEXT_BUDGET_TOKENS: "4000" } });
    llm.push({ text: "that was long" });
    const { ingestEvent } = await import("../../pipeline/index.ts");
    for (let i = 0; i < 12; i++) {
      await ingestEvent(deps, {
        agentId: "default",
        source: "human",
        priority: 0,
        dedupKey: `long:${i}`,
        payload: { text: "please read this carefully. ".repeat(150) },
      });
    }
    const { runPipeline } = await import("./harness.ts");
    await runPipeline(deps);
    const input = llm.requests[0]!.messages.find((m) => m.role === "user")!;
    expect(String(input.content)).toMatch(/input truncated: \d+ of \d+ tokens cut/);
    expect(size(llm.requests[0]!)).toBeLessThanOrEqual(4000);
  });
});
