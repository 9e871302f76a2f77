/**
 * fleetwarden against strict OpenAI-compatible servers (test/support/scripted-llm.ts checks
 * history as Ollama and vLLM do, and can refuse tool_choice as vLLM does without
 * --enable-auto-tool-choice): stored tool calls always carry object arguments, LLM_TOOL_CHOICE
 * decides whether tool_choice is sent, and a server that refuses it is named in the run's error
 * and on /healthz until it answers again.
 */
import { describe, expect, it } from "vitest";
import { asc } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { messages } from "../../schema/index.ts";
import { storableArguments } from "../../agent/llm/tool-call-args.ts";
import { parseConfig } from "../../runtime/config.ts";
import { agentFixture, say, scriptedLlm } from "./harness.ts";

describe("tool-call arguments in history", () => {
  it("a malformed call is answered with an error, stored as {}, and the next run's history passes the strict check", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push(
      {
        tools: [
          { name: "get_instance", arguments: '{"instance_id": "sim-1"', id: "call_bad" },
          { name: "list_instances", arguments: "", id: "call_empty" },
        ],
      },
      { text: "sim-1 looks fine." },
    );
    const first = await say(deps, "how is sim-1?");
    expect(first).toMatchObject({ decider: "llm", reply: "sim-1 looks fine." });

    const stored = await deps.db.select().from(messages).orderBy(asc(messages.id));
    const call = stored.find((m) => m.role === "assistant" && m.toolCalls)!;
    expect((call.toolCalls as { id: string; function: { arguments: string } }[]).map((c) => [c.id, c.function.arguments])).toEqual([
      ["call_bad", "{}"],
      ["call_empty", "{}"],
    ]);
    const badResult = stored.find((m) => m.role === "tool" && m.toolCallId === "call_bad")!;
    expect(JSON.parse(badResult.content).error).toMatch(/not valid JSON/);

    llm.push({ text: "Still fine." });
    const second = await say(deps, "and now?");
    expect(second).toMatchObject({ decider: "llm", reply: "Still fine." });
    expect(llm.refused).toEqual([]);
    const history = llm.requests.at(-1)!.messages;
    expect(history.some((m) => m.tool_calls?.some((c) => c.id === "call_bad" && c.function.arguments === "{}"))).toBe(true);
  });

  it("keeps valid arguments (as canonical JSON) and turns every other shape into {}", () => {
    expect(storableArguments('{ "instance_id" : "sim-1" }')).toBe('{"instance_id":"sim-1"}');
    for (const raw of ["", "  ", '{"a":', "[1,2]", '"text"', "null", "42", undefined]) expect(storableArguments(raw)).toBe("{}");
  });
});

describe("tool_choice and servers that refuse it", () => {
  it("LLM_TOOL_CHOICE is auto by default, accepts none-sent, and names itself when bad", () => {
    const llm = { OPENAI_API_KEY: "sk-test" };
    expect(parseConfig(llm, "node").llm?.toolChoice).toBe("auto");
    expect(parseConfig({ ...llm, LLM_TOOL_CHOICE: "none-sent" }, "node").llm?.toolChoice).toBe("none-sent");
    expect(() => parseConfig({ ...llm, LLM_TOOL_CHOICE: "required" }, "node")).toThrow(/LLM_TOOL_CHOICE/);
  });

  it("sends tool_choice auto by default and omits it with LLM_TOOL_CHOICE=none-sent, which a server refusing the field accepts", async () => {
    const auto = await scriptedLlm();
    const { deps: autoDeps } = await agentFixture({ llm: auto });
    auto.push({ text: "ok" });
    await say(autoDeps, "status?");
    expect(auto.requests[0]!.tool_choice).toBe("auto");

    const llm = await scriptedLlm();
    llm.toolChoiceField = false;
    const { deps } = await agentFixture({ llm, vars: { LLM_TOOL_CHOICE: "none-sent" } });
    llm.push({ text: "All good." });
    expect(await say(deps, "status?")).toMatchObject({ decider: "llm", reply: "All good." });
    expect(llm.requests[0]!.tools?.length).toBeGreaterThan(0);
    expect("tool_choice" in llm.requests[0]!).toBe(false);
    expect(llm.refused).toEqual([]);
  });

  it("vLLM without --enable-auto-tool-choice: the run's error and /healthz say misconfigured and name the flags, until a call succeeds", async () => {
    const llm = await scriptedLlm();
    llm.autoToolChoice = false;
    const { deps } = await agentFixture({ llm });
    const run = await say(deps, "status?");
    expect(run).toMatchObject({ decider: "rules" });
    expect(run.error).toMatch(/LLM server is misconfigured: the server refused tool_choice/);
    expect(run.error).toMatch(/--enable-auto-tool-choice --tool-call-parser/);
    expect(llm.requests).toHaveLength(1); // a 400 is not retried
    const app = buildApp(() => deps);
    const health = await (await app.request("/healthz")).json();
    expect(health.llm).toBe("scripted-model");
    expect(health.ok).toBe(true);
    expect(health.llmTrouble).toEqual([
      {
        agent: "default",
        model: "scripted-model",
        breakerOpenUntil: null,
        misconfigured: expect.stringMatching(/^the server refused tool_choice \(400: .*enable-auto-tool-choice/),
      },
    ]);

    llm.autoToolChoice = true;
    llm.push({ text: "Back." });
    expect(await say(deps, "again?")).toMatchObject({ decider: "llm", reply: "Back." });
    expect((await (await app.request("/healthz")).json()).llmTrouble).toEqual([]);
  });

  it("vLLM defaults an omitted tool_choice to auto, so none-sent does not get around the missing flags", async () => {
    const llm = await scriptedLlm();
    llm.autoToolChoice = false;
    const { deps } = await agentFixture({ llm, vars: { LLM_TOOL_CHOICE: "none-sent" } });
    const run = await say(deps, "status?");
    expect("tool_choice" in llm.requests[0]!).toBe(false);
    expect(run.error).toMatch(/misconfigured/);
  });

  it("a 400 about something else is an ordinary LLM failure, not a misconfiguration", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ status: 400, message: "messages: too many" });
    const run = await say(deps, "status?");
    expect(run.error).toMatch(/the LLM failed after retries/);
    expect((await (await buildApp(() => deps).request("/healthz")).json()).llmTrouble).toEqual([]);
  });
});
