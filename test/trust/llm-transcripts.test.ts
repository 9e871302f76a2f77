/**
 * Every LLM call a run makes is kept (llm_calls): request and response (or the error), numbered,
 * shown by the API and on the run's page, and pruned after LLM_TRANSCRIPT_DAYS.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { llmCalls } from "../../schema/index.ts";
import { pruneOldRecords } from "../../pipeline/index.ts";
import { answerOf } from "../../agent/llm/transcripts.ts";
import { DAY_MS } from "../../runtime/time.ts";
import { authHeaders } from "../support/test-deps.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { agentFixture, answerAfterTheLease, say, scriptedLlm, seedHistory, setInstanceState } from "../agent/harness.ts";

describe("LLM call transcripts", () => {
  it("keeps each call's request and response with the run, in order, and the API and run page show them", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    await setInstanceState(deps, "sim-2", "exited");
    llm.push(
      { tools: [{ name: "get_instance", arguments: { instance_id: "sim-2" }, id: "call_a" }] },
      { text: "sim-2 exited <b>on its own</b>." },
    );

    const run = await say(deps, "what is wrong with sim-2?");

    const rows = await deps.db.select().from(llmCalls);
    expect(rows.map((r) => [r.runId, r.seq, r.purpose, r.model])).toEqual([
      [run.runId, 1, "chat", "scripted-model"],
      [run.runId, 2, "chat", "scripted-model"],
    ]);
    // The request as sent: the same messages and tools the server received.
    const sent = rows[1]!.request as { messages: { role: string }[]; tools: unknown[] };
    expect(sent.messages.map((m) => m.role)).toEqual(llm.requests[1]!.messages.map((m) => m.role));
    expect(sent.tools).toHaveLength(llm.requests[1]!.tools!.length);

    const app = buildApp(() => deps);
    const res = await app.request(`/api/agents/default/runs/${run.runId}/llm-calls`, { headers: authHeaders() });
    expect(res.status).toBe(200);
    const { calls } = await res.json();
    expect(calls.map((c: { seq: number }) => c.seq)).toEqual([1, 2]);
    expect(calls[0].toolCalls).toEqual([{ id: "call_a", name: "get_instance", arguments: '{"instance_id":"sim-2"}' }]);
    expect(calls[1]).toMatchObject({ reply: "sim-2 exited <b>on its own</b>.", error: null, toolCalls: [] });
    expect((await app.request("/api/agents/default/runs/99/llm-calls", { headers: authHeaders() })).status).toBe(404);

    const client = await dashboardClient(deps);
    const page = await client.page(`/runs/${run.runId}`);
    expect(page.html).toContain("Call 2 · chat · scripted-model");
    expect(page.html).toContain("Asked for get_instance");
    expect(page.html).toContain("sim-2 exited &lt;b&gt;on its own&lt;/b&gt;.");
    expect(page.html).not.toContain("<b>on its own</b>");
  });

  it("keeps a failed call as its error", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { LLM_MAX_RETRIES: "0" } });
    llm.push({ status: 500, message: "upstream exploded" });

    const run = await say(deps, "status?");

    expect(run.decider).toBe("rules");
    const [row] = await deps.db.select().from(llmCalls);
    expect(row).toMatchObject({ runId: run.runId, seq: 1, purpose: "chat" });
    expect((row!.response as { error: string }).error).toMatch(/upstream exploded/);
  });

  it("prunes calls older than LLM_TRANSCRIPT_DAYS and keeps newer ones", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { LLM_TRANSCRIPT_DAYS: "2" } });
    llm.push({ text: "first" });
    await say(deps, "one");
    deps.clock.advance(DAY_MS);
    llm.push({ text: "second" });
    const second = await say(deps, "two");

    deps.clock.advance(DAY_MS + 60_000); // the first is now past 2 days, the second is not
    expect((await pruneOldRecords(deps)).llmCalls).toBe(1);
    expect((await deps.db.select().from(llmCalls)).map((r) => r.runId)).toEqual([second.runId]);
  });

  it("a backlog of old calls is pruned at most 1,000 per pass, the rest on the next", async () => {
    const { deps } = await agentFixture({ instances: 0, vars: { LLM_TRANSCRIPT_DAYS: "1" } });
    const row = (seq: number) => ({
      agentId: "default",
      runId: 1,
      seq,
      purpose: "chat",
      model: "m",
      request: {},
      response: {},
      createdAt: deps.clock.now(),
    });
    for (let i = 0; i < 1050; i += 350) await deps.db.insert(llmCalls).values(Array.from({ length: 350 }, (_, j) => row(i + j + 1)));
    deps.clock.advance(DAY_MS + 1);
    expect((await pruneOldRecords(deps)).llmCalls).toBe(1000);
    expect((await pruneOldRecords(deps)).llmCalls).toBe(50);
    expect(await deps.db.$count(llmCalls)).toBe(0);
  });

  it("keeps an answer that arrived after the lease ran out, which the run does not act on", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    answerAfterTheLease(deps);
    llm.push({ tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-1", reason: "late" } }] });
    const run = await say(deps, "reboot sim-1");
    expect(run.error).toMatch(/after the run's deadline/);
    const [row] = await deps.db.select().from(llmCalls);
    expect(answerOf(row!.response).toolCalls.map((c) => c.name)).toEqual(["reboot_instance"]);
  });

  it("keeps the summariser's call too, as purpose summary, numbered before the chat call it made room for", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { CONTEXT_BUDGET_TOKENS: "8000" } });
    await seedHistory(deps, 9_000);
    llm.onSummary = () => ({ text: "Summary: earlier runs restarted sim-1." });
    llm.push({ text: "fine" });
    const run = await say(deps, "status?");
    const rows = await deps.db.select().from(llmCalls);
    expect(rows.map((r) => [r.runId, r.seq, r.purpose])).toEqual([
      [run.runId, 1, "summary"],
      [run.runId, 2, "chat"],
    ]);
    expect((rows[0]!.request as { tools: unknown[] }).tools).toEqual([]);
  });
});
