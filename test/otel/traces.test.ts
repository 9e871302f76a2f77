/**
 * OpenTelemetry traces (issue 36 item 2), checked against a strict local OTLP/HTTP receiver
 * (test/otel/otlp-receiver.ts): an agent run through the real pipeline, the real OpenAI SDK and the
 * scripted LLM over HTTP, which reboots an instance on the simulator, is exported as one request
 * when it finishes: the run's span, a `chat <model>` child per LLM call with the GenAI attributes,
 * and a child for the provider action. Message content only with OTEL_CAPTURE_CONTENT=true;
 * nothing without an endpoint; a collector that fails or hangs neither fails the run nor is
 * awaited by it, and is logged once; a run keeps at most MAX_SPANS_PER_RUN spans.
 */
import { afterEach, describe, expect, it } from "vitest";
import { agentFixture, say, scriptedLlm, setInstanceState } from "../agent/harness.ts";
import { ConfigError, parseConfig } from "../../runtime/config.ts";
import { MAX_SPANS_PER_RUN, OtlpTracer, parseOtlpHeaders, tracerFromSettings } from "../../runtime/otlp-tracer.ts";
import { noopTracer } from "../../runtime/trace.ts";
import type { Logger } from "../../runtime/log.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { attributesOf, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from "./otlp-receiver.ts";

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver();
  receivers.push(r);
  return r;
}

const silent: Logger = { info: () => {}, error: () => {} };

function capturingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => {}, error: (message, fields) => errors.push(`${message} ${JSON.stringify(fields)}`) };
}

/**
 * The agent fixture with the host's tracer (as functions/host/wire-deps.ts makes it from the
 * settings), and the exports handed to `background` collected, so the test awaits them instead of sleeping.
 */
async function tracedAgent(vars: Record<string, string>) {
  const llm = await scriptedLlm();
  const log = capturingLog();
  const { deps } = await agentFixture({ llm, vars });
  deps.log = log;
  deps.tracer = tracerFromSettings(deps.config.otel, deps.clock, log);
  const exports: Promise<unknown>[] = [];
  deps.background = (work) => void exports.push(work);
  await setInstanceState(deps, "sim-2", "exited");
  llm.push(
    { tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-2", reason: "it exited" }, id: "call_reboot" }] },
    { text: "sim-2 had exited; I rebooted it.", usage: { prompt: 250, completion: 7 } },
  );
  return { deps, llm, log, exports };
}

function byName(spans: OtlpSpan[]) {
  const run = spans.find((s) => s.name === "fleetwarden.run");
  if (!run) throw new Error(`no run span among ${spans.map((s) => s.name).join(", ")}`);
  return {
    run,
    chats: spans.filter((s) => s.name.startsWith("chat ")),
    actions: spans.filter((s) => s.name.startsWith("fleetwarden.action")),
  };
}

describe("traces of a run over OTLP/HTTP", () => {
  it("sends the run, its LLM calls and its provider action as one OTLP/JSON request when the run finishes", async () => {
    const collector = await receiver();
    const { deps, exports } = await tracedAgent({
      OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`,
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20otlp-secret,x-tenant=fleet-1",
      OTEL_SERVICE_NAME: "fleetwarden-test",
    });

    const row = await say(deps, "what is wrong with sim-2?");
    expect(row).toMatchObject({ status: "succeeded", decider: "llm" });
    expect(exports).toHaveLength(1);
    await Promise.all(exports);

    expect(collector.refused).toEqual([]);
    expect(collector.received).toHaveLength(1);
    const [sent] = collector.received;
    expect(sent!.headers.authorization).toBe("Bearer otlp-secret");
    expect(sent!.headers["x-tenant"]).toBe("fleet-1");
    expect(sent!.serviceName).toBe("fleetwarden-test");

    const { run, chats, actions } = byName(sent!.spans);
    expect(sent!.spans).toHaveLength(4);
    expect(run.parentSpanId ?? "").toBe("");
    expect(attributesOf(run)).toMatchObject({
      "fleetwarden.agent.id": "default",
      "fleetwarden.run.id": row.runId,
      "fleetwarden.run.triggers": ["human"],
      "fleetwarden.run.decider": "llm",
      "fleetwarden.run.status": "succeeded",
    });
    expect(run.status).toEqual({ code: 1 });
    for (const child of [...chats, ...actions]) {
      expect(child.traceId).toBe(run.traceId);
      expect(child.parentSpanId).toBe(run.spanId);
      expect(BigInt(child.startTimeUnixNano) >= BigInt(run.startTimeUnixNano)).toBe(true);
    }
    expect(new Set(sent!.spans.map((s) => s.spanId)).size).toBe(4);

    // GenAI semantic conventions: one client span per call, named `chat <model>`.
    expect(chats.map((c) => [c.name, c.kind])).toEqual([
      ["chat scripted-model", 3],
      ["chat scripted-model", 3],
    ]);
    expect(attributesOf(chats[0]!)).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.system": "openai",
      "gen_ai.request.model": "scripted-model",
      "gen_ai.response.model": "scripted-model",
      "gen_ai.usage.input_tokens": 100,
      "gen_ai.usage.output_tokens": 10,
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });
    expect(attributesOf(chats[1]!)).toMatchObject({
      "gen_ai.usage.input_tokens": 250,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.response.finish_reasons": ["stop"],
    });
    // No content without the opt-in.
    for (const chat of chats) {
      expect(Object.keys(attributesOf(chat)).filter((k) => k.includes("messages"))).toEqual([]);
      expect(JSON.stringify(chat)).not.toContain("what is wrong with sim-2");
    }

    expect(actions).toHaveLength(1);
    expect(actions[0]!.name).toBe("fleetwarden.action reboot");
    expect(attributesOf(actions[0]!)).toMatchObject({
      "fleetwarden.action.kind": "reboot",
      "fleetwarden.instance.id": "sim-2",
      "fleetwarden.action.decided_by": "llm",
      "fleetwarden.action.outcome": "act",
      "fleetwarden.action.status": "succeeded",
      "fleetwarden.provider": "simulator",
    });
    expect(actions[0]!.status).toEqual({ code: 1 });
  });

  it("adds the messages to the LLM spans only with OTEL_CAPTURE_CONTENT=true", async () => {
    const collector = await receiver();
    const { deps, exports } = await tracedAgent({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_CAPTURE_CONTENT: "true" });
    await say(deps, "what is wrong with sim-2?");
    await Promise.all(exports);
    const { chats } = byName(collector.received[0]!.spans);
    const first = attributesOf(chats[0]!);
    const input = JSON.parse(first["gen_ai.input.messages"] as string) as { role: string; parts: { type: string; content?: string }[] }[];
    expect(input.at(-1)!.role).toBe("user");
    expect(input.at(-1)!.parts[0]!.content).toContain("what is wrong with sim-2?");
    expect(JSON.parse(first["gen_ai.output.messages"] as string)).toEqual([
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: "call_reboot", name: "reboot_instance", arguments: '{"instance_id":"sim-2","reason":"it exited"}' },
        ],
        finish_reason: "tool_calls",
      },
    ]);
    // The second call was sent the tool's answer.
    const second = JSON.parse(attributesOf(chats[1]!)["gen_ai.input.messages"] as string) as {
      role: string;
      parts: { type: string; id?: string }[];
    }[];
    expect(second.at(-1)).toMatchObject({ role: "tool", parts: [{ type: "tool_call_response", id: "call_reboot" }] });
  });

  it("sends nothing when OTEL_EXPORTER_OTLP_ENDPOINT is not set", async () => {
    const collector = await receiver();
    const { deps, exports } = await tracedAgent({});
    expect(deps.tracer).toBe(noopTracer);
    const row = await say(deps, "what is wrong with sim-2?");
    expect(row.status).toBe("succeeded");
    await Promise.all(exports);
    expect(collector.arrived).toBe(0);
  });

  for (const mode of ["fail", "hang"] as const) {
    it(`a collector that ${mode === "fail" ? "answers 500" : "never answers"} neither fails the run nor holds it, and is logged once`, async () => {
      const collector = await receiver();
      collector.mode = mode;
      const { deps, llm, log, exports } = await tracedAgent({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
      // A short timeout for the test's sake (the host's is EXPORT_TIMEOUT_MS).
      deps.tracer = new OtlpTracer(
        { endpoint: collector.url, serviceName: "fleetwarden", captureContent: false, timeoutMs: 200 },
        deps.clock,
        log,
      );
      const first = await say(deps, "what is wrong with sim-2?");
      expect(first).toMatchObject({ status: "succeeded", decider: "llm" });
      llm.push({ text: "All fine." });
      const second = await say(deps, "and now?");
      expect(second).toMatchObject({ status: "succeeded", decider: "llm" });
      expect(exports).toHaveLength(2);
      // Each export ends (abandoned at its timeout, or refused) and never rejects.
      await Promise.all(exports);
      expect(collector.arrived).toBe(2);
      expect(collector.received).toEqual([]);
      expect(log.errors.filter((e) => e.startsWith("trace export failed"))).toHaveLength(1);
    });
  }
});

describe("traces of runs without the LLM", () => {
  it("a run the rules policy decided is traced with its decider; a run whose step threw has an error status", async () => {
    const collector = await receiver();
    const { deps } = await agentFixture({ vars: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } });
    deps.tracer = tracerFromSettings(deps.config.otel, deps.clock, silent);
    const exports: Promise<unknown>[] = [];
    deps.background = (work) => void exports.push(work);
    expect(await say(deps, "status?")).toMatchObject({ status: "succeeded", decider: "rules" });
    deps.runStep = async () => {
      throw new Error("the step broke");
    };
    expect(await say(deps, "again?")).toMatchObject({ status: "failed" });
    await Promise.all(exports);
    const roots = collector.received
      .map((r) => r.spans.find((s) => s.name === "fleetwarden.run")!)
      .sort((a, b) => Number(attributesOf(a)["fleetwarden.run.id"]) - Number(attributesOf(b)["fleetwarden.run.id"]));
    expect(roots.map((r) => [attributesOf(r)["fleetwarden.run.decider"], attributesOf(r)["fleetwarden.run.status"], r.status])).toEqual([
      ["rules", "succeeded", { code: 1 }],
      [undefined, "failed", { code: 2, message: "the step broke" }],
    ]);
    // No LLM, no chat span.
    expect(collector.received.flatMap((r) => r.spans).filter((s) => s.name.startsWith("chat "))).toEqual([]);
  });
});

describe("the tracer's bounds and settings", () => {
  it("keeps at most MAX_SPANS_PER_RUN spans of a run and counts the rest on the run's span", async () => {
    const collector = await receiver();
    const tracer = new OtlpTracer(
      { endpoint: collector.url, serviceName: "fleetwarden", captureContent: false },
      new FakeClock(),
      capturingLog(),
    );
    const key = { agentId: "default", runId: 7 };
    const run = tracer.startRun(key, "fleetwarden.run", {});
    for (let i = 0; i < MAX_SPANS_PER_RUN + 50; i++) tracer.startChild(key, "fleetwarden.action stop", "client", { i }).end();
    run.end();
    // A child of a run that is not traced records nothing: run ids count per agent.
    tracer.startChild({ agentId: "other", runId: 7 }, "chat x", "client", {}).end();
    tracer.startChild(null, "chat x", "client", {}).end();
    await tracer.finishRun(key);
    await tracer.finishRun(key); // once only
    expect(collector.received).toHaveLength(1);
    const spans = collector.received[0]!.spans;
    expect(spans).toHaveLength(MAX_SPANS_PER_RUN);
    expect(attributesOf(spans[0]!)["fleetwarden.trace.dropped_spans"]).toBe(51);
  });

  it("reads OTEL_EXPORTER_OTLP_HEADERS in the SDK's format and refuses what is not", () => {
    expect(parseOtlpHeaders("api-key=abc%3D%3D, x-b = two ")).toEqual({ "api-key": "abc==", "x-b": "two" });
    expect(parseOtlpHeaders("no-equals")).toBeNull();
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    expect(parseConfig({ ...base, OTEL_EXPORTER_OTLP_HEADERS: "a=1,b=2" }, "node").otel).toEqual({
      endpoint: "http://127.0.0.1:4318",
      headers: { a: "1", b: "2" },
      serviceName: "fleetwarden",
      captureContent: false,
    });
    expect(() => parseConfig({ ...base, OTEL_EXPORTER_OTLP_HEADERS: "just-a-key" }, "node")).toThrow(ConfigError);
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "node")).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => parseConfig({ OTEL_CAPTURE_CONTENT: "yes" }, "node")).toThrow(/OTEL_CAPTURE_CONTENT/);
  });
});
