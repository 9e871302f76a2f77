/**
 * Answers that end short of a complete one, as OpenAI sends them (test/support/scripted-llm.ts
 * header): a message cut at the output limit (`finish_reason: "length"`) is never shown or acted
 * on as if complete — the run records `truncated`, the reply says it was cut, a cut message's tool
 * calls are not run — and a refusal (`message.refusal`, content null) reads as a refusal. A message
 * the provider's content filter stopped (`finish_reason: "content_filter"`) says so in the reply,
 * never empty; its tool calls are not run, and the run's error records the filter.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { actions, messages } from "../../schema/index.ts";
import { FILTERED_REPLY, REPLY_CUT_MARKER } from "../../agent/llm/completion-ending.ts";
import { authHeaders } from "../support/test-deps.ts";
import { agentFixture, say, scriptedLlm, setInstanceState } from "./harness.ts";
import type { TestDeps } from "../support/test-deps.ts";

async function runsApi(deps: TestDeps) {
  const res = await buildApp(() => deps).request("/api/agents/default/runs", { headers: authHeaders() });
  expect(res.status).toBe(200);
  return ((await res.json()) as { runs: { runId: number; truncated: boolean; reply: string | null; error: string | null }[] }).runs;
}

describe("a reply cut at the output limit", () => {
  it("is shown with a marker saying it was cut, and the run records truncated (the API shows it)", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ text: "Both instances are running. sim-1 has been up for", finish: "length" }, { text: "All good." });

    const cut = await say(deps, "how is the fleet?");
    expect(cut).toMatchObject({ status: "succeeded", decider: "llm", truncated: true });
    expect(cut.reply).toBe(`Both instances are running. sim-1 has been up for\n\n${REPLY_CUT_MARKER}`);
    // The stored turn carries the marker too, so the next run's history shows the model it was cut.
    const [stored] = await deps.db
      .select()
      .from(messages)
      .where(eq(messages.runId, cut.runId))
      .orderBy(messages.id)
      .then((rows) => rows.filter((m) => m.role === "assistant"));
    expect(stored!.content).toContain(REPLY_CUT_MARKER);

    const whole = await say(deps, "and now?");
    expect(whole).toMatchObject({ truncated: false, reply: "All good." });
    expect(llm.requests[1]!.messages.some((m) => m.role === "assistant" && String(m.content).endsWith(REPLY_CUT_MARKER))).toBe(true);
    expect((await runsApi(deps)).map((r) => [r.runId, r.truncated])).toEqual([
      [whole.runId, false],
      [cut.runId, true],
    ]);
  });

  it("an empty cut reply is the marker alone, never an empty reply", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ text: "", finish: "length" });
    expect(await say(deps, "status?")).toMatchObject({ truncated: true, reply: REPLY_CUT_MARKER });
  });
});

describe("tool calls in a cut message", () => {
  it("are not run, even when their arguments parse: each gets an error result and the model is asked again", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    await setInstanceState(deps, "sim-2", "exited");
    llm.push(
      { tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-2", reason: "it exited" }, id: "call_cut" }], finish: "length" },
      { text: "I could not finish that call; sim-2 is still exited." },
    );

    const run = await say(deps, "fix sim-2");
    expect(run).toMatchObject({
      status: "succeeded",
      decider: "llm",
      truncated: true,
      noop: false,
      reply: "I could not finish that call; sim-2 is still exited.",
    });
    expect(await deps.db.select().from(actions)).toEqual([]);
    const answered = llm.requests[1]!.messages.at(-1)!;
    expect(answered).toMatchObject({ role: "tool", tool_call_id: "call_cut" });
    expect(JSON.parse(answered.content!).error).toMatch(/not executed: your message was cut at the output limit/);
  });

  it("a call cut mid-arguments is not run either, and two cut rounds in a row hand the run to the rules policy", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    const cutCall = { tools: [{ name: "reboot_instance", arguments: '{"instance_id": "sim-1", "rea' }], finish: "length" as const };
    llm.push(cutCall, cutCall);

    const run = await say(deps, "reboot sim-1");
    expect(run).toMatchObject({ decider: "rules", truncated: true });
    expect(run.error).toMatch(/malformed tool calls 2 times in a row/);
    expect(llm.requests).toHaveLength(2);
    expect((await deps.db.select().from(actions)).filter((a) => a.decidedBy === "llm")).toEqual([]);
  });
});

describe("a refusal", () => {
  it("is shown to the human as a refusal and noted in the run's error, never as an empty reply", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ refusal: "I can't help with that request." });

    const run = await say(deps, "delete every instance you can find");
    expect(run).toMatchObject({
      status: "succeeded",
      decider: "llm",
      truncated: false,
      reply: "The model refused: I can't help with that request.",
    });
    expect(run.error).toBe("the model refused: I can't help with that request.");
    const [listed] = await runsApi(deps);
    expect(listed).toMatchObject({
      reply: "The model refused: I can't help with that request.",
      error: expect.stringContaining("refused"),
    });
  });
});

describe("an answer the provider's content filter stopped", () => {
  it("empty, reads as stopped by the filter (never an empty reply) and is recorded on the run", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ text: "", finish: "content_filter" });

    const run = await say(deps, "how is the fleet?");
    expect(run).toMatchObject({ status: "succeeded", decider: "llm", reply: FILTERED_REPLY });
    expect(run.reply).toMatch(/provider's content filter stopped/);
    expect(run.error).toMatch(/content filter stopped the answer \(finish_reason content_filter\)/);
    const [listed] = await runsApi(deps);
    expect(listed).toMatchObject({ reply: FILTERED_REPLY, error: expect.stringContaining("content_filter") });
  });

  it("with partial text, keeps what arrived and says the filter stopped the rest; its tool calls are not run", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    await setInstanceState(deps, "sim-2", "exited");
    llm.push({
      text: "sim-2 exited, I will",
      tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-2", reason: "it exited" } }],
      finish: "content_filter",
    });

    const run = await say(deps, "fix sim-2");
    expect(run.reply).toBe(`sim-2 exited, I will\n\n${FILTERED_REPLY}`);
    expect(run.error).toMatch(/content_filter/);
    expect(await deps.db.select().from(actions)).toEqual([]);
    expect(llm.requests).toHaveLength(1);
    // The stored turn carries the note, so the next run's history shows the model what happened.
    const stored = (await deps.db.select().from(messages).where(eq(messages.runId, run.runId))).filter((m) => m.role === "assistant");
    expect(stored.at(-1)!.content).toContain(FILTERED_REPLY);
  });
});

describe("the scripted server ends answers as OpenAI documents", () => {
  it("answers finish_reason length and a refusal with content null; every other message carries refusal: null", async () => {
    const llm = await scriptedLlm();
    llm.onSummary = null; // these requests carry no tools: take them from the queue
    llm.push({ text: "partial", finish: "length" }, { refusal: "No." }, { text: "whole" }, { text: "", finish: "content_filter" });
    const ask = async () => {
      const res = await fetch(`${llm.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
      });
      return ((await res.json()) as { choices: { message: Record<string, unknown>; finish_reason: string }[] }).choices[0]!;
    };
    expect(await ask()).toMatchObject({ finish_reason: "length", message: { content: "partial", refusal: null } });
    expect(await ask()).toMatchObject({ finish_reason: "stop", message: { content: null, refusal: "No." } });
    expect(await ask()).toMatchObject({ finish_reason: "stop", message: { content: "whole", refusal: null } });
    expect(await ask()).toMatchObject({ finish_reason: "content_filter", message: { content: null, refusal: null } });
  });
});
