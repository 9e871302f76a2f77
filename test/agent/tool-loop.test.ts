/** The tool loop end to end through the real pipeline, the real SDK and a scripted server. */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { actions, messages } from "../../schema/index.ts";
import { countMessage, countPrompt } from "../../agent/prompt/tokens.ts";
import { authHeaders } from "../support/test-deps.ts";
import { agentFixture, latestRun, say, scriptedLlm, setInstanceState } from "./harness.ts";

describe("agent tool loop", () => {
  it("calls tools until the model answers, records the actions and replies to the human", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    await setInstanceState(deps, "sim-2", "exited");
    llm.push(
      { tools: [{ name: "get_instance", arguments: { instance_id: "sim-2" }, id: "call_a" }] },
      { tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-2", reason: "it exited" }, id: "call_b" }] },
      { text: "sim-2 had exited; I rebooted it." },
    );

    const run = await say(deps, "what is wrong with sim-2?");

    expect(run).toMatchObject({
      status: "succeeded",
      decider: "llm",
      noop: false,
      reply: "sim-2 had exited; I rebooted it.",
      promptTokens: 300,
      completionTokens: 30,
    });
    expect(llm.requests).toHaveLength(3);
    const first = llm.requests[0]!;
    expect(first.model).toBe("scripted-model");
    expect(first.tools?.map((t) => t.function.name)).toEqual([
      "list_instances",
      "get_instance",
      "get_instance_logs",
      "start_instance",
      "stop_instance",
      "reboot_instance",
      "destroy_instance",
      "replace_instance",
      "notify_human",
      "schedule_next_check",
      "cancel_wake",
      "remember",
      "forget",
    ]);
    // The fleet snapshot comes from the database, and the human's message is the current input.
    expect(first.messages.at(-1)!.content).toMatch(/\{"id":"sim-2","state":"exited","since":/);
    expect(first.messages.at(-1)).toMatchObject({ role: "user" });
    expect(first.messages.at(-1)!.content).toContain("Human message: what is wrong with sim-2?");
    // The second request carries the first tool call and its result, paired by id.
    const second = llm.requests[1]!.messages.slice(-2);
    expect(second[0]!.tool_calls?.[0]?.id).toBe("call_a");
    expect(second[1]).toMatchObject({ role: "tool", tool_call_id: "call_a" });
    expect(second[1]!.content).toContain('"state":"running"'); // the simulator's live view
    // contextTokens is the largest request as counted with the tokenizer.
    const sizes = llm.requests.map((r) => countPrompt(r.messages as never, r.tools as never));
    expect(run.contextTokens).toBe(Math.max(...sizes));

    const [action] = await deps.db.select().from(actions).where(eq(actions.agentId, "default"));
    expect(action).toMatchObject({ kind: "reboot", instanceId: "sim-2", status: "succeeded", decidedBy: "llm", runId: run.runId });
    // Keyed by what it answers (the human's message), not by the run or the tool call.
    expect(action!.idempotencyKey).toBe(`agent:default:reboot:sim-2:events:${(run.triggers as { id: number }[])[0]!.id}`);

    // The run's turns are stored with their token counts and shown as the conversation.
    const app = buildApp(() => deps);
    const conversation = await (await app.request("/api/agents/default/conversation", { headers: authHeaders() })).json();
    expect(conversation.messages.map((m: { role: string }) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(conversation.messages.at(-1).content).toBe("sim-2 had exited; I rebooted it.");
    const stored = await deps.db
      .select()
      .from(messages)
      .where(and(eq(messages.agentId, "default"), eq(messages.runId, run.runId)));
    for (const m of stored) {
      const asSent =
        m.role === "tool"
          ? { role: "tool" as const, content: m.content, tool_call_id: m.toolCallId! }
          : { role: m.role as "user", content: m.content };
      if (!m.toolCalls) expect(m.tokens).toBe(countMessage(asSent));
      expect(m.tokens).toBeGreaterThan(0);
    }
    const state = await (await app.request("/api/agents/default", { headers: authHeaders() })).json();
    expect(state).toMatchObject({ contextTokens: run.contextTokens, contextBudget: 30000, running: false });
  });

  it("feeds stored turns back as history on the next run", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ text: "Hello, all 2 instances are running." }, { text: "Still fine." });
    await say(deps, "hi");
    await say(deps, "and now?");
    const second = llm.requests[1]!.messages.map((m) => `${m.role}:${String(m.content).slice(-40)}`);
    expect(second.slice(2)).toEqual([
      expect.stringContaining("Human message: hi"),
      "assistant:Hello, all 2 instances are running.",
      expect.stringContaining("Human message: and now?"),
    ]);
  });

  it("stops after AGENT_MAX_ITERATIONS calls, records why, and still finishes the run", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { AGENT_MAX_ITERATIONS: "3" } });
    for (let i = 0; i < 5; i++) llm.push({ tools: [{ name: "list_instances", arguments: {} }] });

    const run = await say(deps, "loop forever");

    expect(llm.requests).toHaveLength(3);
    expect(run).toMatchObject({ status: "succeeded", decider: "llm" });
    expect(run.error).toContain("stopped after 3 LLM calls without a final answer");
    expect(run.reply).toBeTruthy();
    const state = await (await buildApp(() => deps).request("/api/agents/default", { headers: authHeaders() })).json();
    expect(state.running).toBe(false);
  });

  it("a run that only looked is a no-op: audit row kept, conversation untouched, nothing published", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ tools: [{ name: "list_instances", arguments: {} }] }, { text: "All good." });
    await deps.db
      .insert(messages)
      .values({ agentId: "default", sessionEpoch: 1, runId: 0, role: "user", content: "earlier", tokens: 5, createdAt: 0 });
    const { trigger } = await import("./harness.ts");
    const scheduler = deps.scheduler as import("../support/test-deps.ts").RecordingScheduler;

    const run = await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "running" } });

    expect(run).toMatchObject({ status: "succeeded", noop: true, decider: "llm" });
    expect(run.contextTokens).toBeGreaterThan(0);
    expect(run.compaction).toMatchObject({ calls: [expect.objectContaining({ budget: 30000 }), expect.anything()] });
    const stored = await deps.db.select().from(messages);
    expect(stored.map((m) => m.content)).toEqual(["earlier"]);
    expect(scheduler.published).toEqual([]);
    expect((await latestRun(deps)).runId).toBe(run.runId);
  });
});
