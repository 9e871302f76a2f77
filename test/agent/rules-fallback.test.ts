/**
 * The rules policy decides when there is no LLM, when the LLM fails after retries (500s,
 * timeouts) or keeps sending malformed tool calls; the run finishes and releases its lease either
 * way, and the circuit breaker stops calling a failing endpoint until it answers again.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actions, breakers, messages, notifications, wakes } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { agentFixture, say, scriptedLlm, setInstanceState, trigger } from "./harness.ts";

const exited = (deps: TestDeps, id = "sim-1") =>
  setInstanceState(deps, id, "exited").then(() => trigger(deps, { source: "webhook", payload: { instanceId: id, state: "exited" } }));

async function agentState(deps: TestDeps) {
  return (await buildApp(() => deps).request("/api/agents/default", { headers: authHeaders() })).json();
}

describe("rules fallback", () => {
  it("with no LLM configured, restarts an exited instance, schedules a re-check, and healthz says llm none", async () => {
    const { deps } = await agentFixture();
    expect(deps.llm).toBeNull();
    const health = await (await buildApp(() => deps).request("/healthz")).json();
    expect(health.llm).toBe("none");

    const run = await exited(deps);

    expect(run).toMatchObject({ status: "succeeded", decider: "rules", noop: false, contextTokens: 0 });
    expect(run.error).toMatch(/no LLM is configured/);
    const [action] = await deps.db.select().from(actions);
    expect(action).toMatchObject({ kind: "start", instanceId: "sim-1", decidedBy: "rules", status: "succeeded" });
    expect((await deps.provider.get("sim-1"))!.state).toBe("running");
    const [wake] = await deps.db.select().from(wakes);
    expect(wake).toMatchObject({ status: "pending", createdByRun: run.runId, dueAt: deps.clock.now() + 5 * 60_000 });
    const turns = await deps.db.select().from(messages);
    expect(turns.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(turns[1]!.content).toMatch(/rules policy.*restarted sim-1/);
    expect(await agentState(deps)).toMatchObject({ running: false });
  });

  it("restarts at most RULES_MAX_RESTARTS_PER_HOUR times, then notifies a human", async () => {
    const { deps } = await agentFixture({ vars: { RULES_MAX_RESTARTS_PER_HOUR: "2" } });
    await exited(deps);
    await exited(deps);
    const third = await exited(deps);
    const starts = await deps.db.select().from(actions).where(eq(actions.kind, "start"));
    expect(starts).toHaveLength(2);
    expect(third).toMatchObject({ decider: "rules", noop: false });
    // Each restart was told (fleet/actions/money-told.ts), then the alert that restarting stopped.
    const told = await deps.db.select().from(notifications).orderBy(notifications.id);
    expect(told.map((n) => n.title)).toEqual([
      expect.stringMatching(/^Started sim-1: /),
      expect.stringMatching(/^Started sim-1: /),
      expect.any(String),
    ]);
    expect(told[2]).toMatchObject({ title: "Instance sim-1 keeps failing", severity: "critical" });
    // An hour later the budget of restarts is back.
    deps.clock.advance(3_600_000);
    await exited(deps);
    expect(await deps.db.select().from(actions).where(eq(actions.kind, "start"))).toHaveLength(3);
  });

  it("answers a human message with the fleet state when no LLM is configured", async () => {
    const { deps } = await agentFixture();
    const run = await say(deps, "how are things?");
    expect(run).toMatchObject({ decider: "rules", noop: false });
    expect(run.reply).toMatch(
      /rules policy answered \(no LLM is configured\)\. Without an LLM, chat cannot act on "how are things\?".*Fleet: 2 running\./,
    );
    expect(run.reply).not.toMatch(/No action was needed/);
  });

  it("falls back to rules when the LLM answers 500 after the SDK's retries", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ status: 500 }, { status: 503 });
    const run = await exited(deps);
    expect(llm.requests).toHaveLength(2); // one try + LLM_MAX_RETRIES=1
    expect(run).toMatchObject({ status: "succeeded", decider: "rules", noop: false });
    expect(run.error).toMatch(/LLM failed after retries/);
    expect(await deps.db.select().from(actions)).toHaveLength(1);
    expect(await agentState(deps)).toMatchObject({ running: false, nextRunAt: null, pendingEvents: 0 });
  });

  it("falls back to rules when the LLM times out", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, vars: { LLM_TIMEOUT_MS: "150" } });
    llm.push({ delayMs: 1500, then: { text: "too late" } }, { delayMs: 1500, then: { text: "too late" } });
    const run = await say(deps, "hello?");
    expect(run).toMatchObject({ status: "succeeded", decider: "rules" });
    expect(run.error).toMatch(/LLM failed after retries: .*(timed out|Timeout)/i);
    expect(run.reply).toMatch(/rules policy answered/);
  });

  it("falls back to rules when the model keeps sending malformed tool calls", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push(
      { tools: [{ name: "start_instance", arguments: '{"instance_id": "sim-1", ' }] },
      { tools: [{ name: "start_instnce", arguments: "{}" }] },
      { text: "never asked for" },
    );
    const run = await exited(deps);
    expect(llm.requests).toHaveLength(2);
    expect(run).toMatchObject({ decider: "rules", noop: false });
    expect(run.error).toMatch(/malformed tool calls 2 times in a row/);
    // What the model sent stays recorded with its error results, pairs intact.
    const roles = (await deps.db.select().from(messages)).map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
  });

  it("falls back to rules on a malformed response body", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ raw: { id: "x", object: "chat.completion", choices: [] } });
    const run = await say(deps, "hi");
    expect(run).toMatchObject({ decider: "rules" });
    expect(run.error).toMatch(/without a message/);
  });

  it("opens the circuit breaker after repeated failures, skips the endpoint, and closes when it answers", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm, breaker: { threshold: 2, cooldownMs: 60_000, maxCooldownMs: 600_000 } });
    llm.push({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    await say(deps, "one");
    await say(deps, "two");
    const [breaker] = await deps.db.select().from(breakers);
    expect(breaker).toMatchObject({ name: "llm:default:scripted-model", failures: 2 });
    expect(breaker!.openUntil).toBeGreaterThan(deps.clock.now());

    const skipped = await say(deps, "three");
    expect(llm.requests).toHaveLength(4);
    expect(skipped).toMatchObject({ decider: "rules" });
    expect(skipped.error).toMatch(/circuit breaker is open until/);

    deps.clock.advance(60_000);
    llm.push({ text: "I'm back." });
    const recovered = await say(deps, "four");
    expect(recovered).toMatchObject({ decider: "llm", reply: "I'm back." });
    expect((await deps.db.select().from(breakers))[0]).toMatchObject({ failures: 0, openUntil: null });
  });
});
