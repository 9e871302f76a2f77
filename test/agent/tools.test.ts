/**
 * Each tool's argument validation and effect, through runToolCall (the same path the loop uses):
 * bad arguments give the model a readable error naming the problem and write nothing.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actions, approvals, memory, notifications, wakes } from "../../schema/index.ts";
import { runToolCall, CHAT_TOOLS } from "../../agent/tools/index.ts";
import { TOOL_OUTPUT_MAX_TOKENS } from "../../agent/tools/tool.ts";
import { countText } from "../../agent/prompt/tokens.ts";
import { MAX_MEMORY_FACTS } from "../../agent/memory.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { holdLease } from "../support/held-lease.ts";
import type { RunFence } from "../../pipeline/index.ts";
import { agentFixture, scriptedLlm, say } from "./harness.ts";

let call = 0;
const fences = new WeakMap<TestDeps, RunFence>();
const run = async (deps: TestDeps, name: string, args: unknown) => {
  const fence = fences.get(deps) ?? (await holdLease(deps, "default", 7));
  fences.set(deps, fence);
  // A human message naming the instances acted on: it concerns them (agent/action-evidence.ts).
  const answering = { events: [{ id: call + 1, source: "human", payload: { text: "look after sim-1 and sim-2" } }], wakes: [] };
  return runToolCall(
    { deps, agentId: "default", runId: 7, toolCallId: `c${++call}`, fence, answering },
    name,
    typeof args === "string" ? args : JSON.stringify(args),
  );
};

async function rowCounts(deps: TestDeps) {
  const count = async (table: typeof actions | typeof notifications | typeof wakes | typeof memory) =>
    (await deps.db.select().from(table)).length;
  return {
    actions: await count(actions),
    notifications: await count(notifications),
    wakes: await count(wakes),
    memory: await count(memory),
  };
}

async function expectRefused(deps: TestDeps, name: string, args: unknown, problem: RegExp) {
  const before = await rowCounts(deps);
  const outcome = await run(deps, name, args);
  expect(outcome).toMatchObject({ invalid: true, mutated: false });
  expect(JSON.parse(outcome.content).error).toMatch(problem);
  expect(await rowCounts(deps)).toEqual(before);
}

describe("tool argument validation", () => {
  it("refuses unknown tools and malformed JSON", async () => {
    const { deps } = await agentFixture();
    await expectRefused(deps, "format_disk", {}, /unknown tool: format_disk/);
    await expectRefused(deps, "get_instance", '{"instance_id": "sim-1"', /not valid JSON/);
  });

  it("list_instances and get_instance read the provider and never mutate", async () => {
    const { deps } = await agentFixture({ instances: 3 });
    await expectRefused(deps, "list_instances", { state: "melting" }, /state/);
    await expectRefused(deps, "get_instance", {}, /instance_id/);
    await expectRefused(deps, "get_instance", { instance_id: "sim-1", extra: 1 }, /extra/);
    const listed = await run(deps, "list_instances", {});
    expect(listed).toMatchObject({ invalid: false, mutated: false });
    expect(JSON.parse(listed.content).count).toBe(3);
    const missing = await run(deps, "get_instance", { instance_id: "sim-99" });
    expect(JSON.parse(missing.content).error).toMatch(/unknown instance: sim-99/);
  });

  it("instance actions need instance_id and reason, go through executeAction, and destroy waits for approval", async () => {
    const { deps } = await agentFixture();
    for (const name of ["start_instance", "stop_instance", "reboot_instance", "destroy_instance"]) {
      await expectRefused(deps, name, { instance_id: "sim-1" }, /reason/);
      await expectRefused(deps, name, { reason: "x" }, /instance_id/);
    }
    const stopped = await run(deps, "stop_instance", { instance_id: "sim-1", reason: "idle" });
    expect(stopped).toMatchObject({ mutated: true, invalid: false });
    expect(JSON.parse(stopped.content).status).toBe("succeeded");
    expect((await deps.provider.get("sim-1"))!.state).toBe("stopped");

    const destroy = await run(deps, "destroy_instance", { instance_id: "sim-2", reason: "no longer needed" });
    expect(JSON.parse(destroy.content)).toMatchObject({ status: "awaiting_approval" });
    expect(destroy.mutated).toBe(true);
    expect((await deps.provider.get("sim-2"))!.state).toBe("running");
    expect(await deps.db.select().from(approvals)).toHaveLength(1);
    // The model's stop was told (fleet/actions/money-told.ts); the destroy asks a human.
    expect((await deps.db.select().from(notifications).orderBy(notifications.id)).map((n) => n.title)).toEqual([
      expect.stringMatching(/^Stopped sim-1: /),
      expect.stringMatching(/Approval needed: destroy sim-2/),
    ]);
  });

  it("the per-instance rate limit refuses without mutating", async () => {
    const { deps } = await agentFixture({ vars: { ACTION_RATE_LIMIT_PER_HOUR: "1" } });
    expect((await run(deps, "reboot_instance", { instance_id: "sim-1", reason: "one" })).mutated).toBe(true);
    const limited = await run(deps, "reboot_instance", { instance_id: "sim-1", reason: "two" });
    expect(limited.mutated).toBe(false);
    expect(JSON.parse(limited.content).status).toBe("rate_limited");
  });

  it("notify_human validates severity and text, and a repeat is not a mutation", async () => {
    const { deps } = await agentFixture();
    await expectRefused(deps, "notify_human", { title: "t", body: "b", severity: "urgent" }, /severity/);
    await expectRefused(deps, "notify_human", { title: "", body: "b", severity: "info" }, /title/);
    await expectRefused(deps, "notify_human", { title: "t", severity: "info" }, /body/);
    const first = await run(deps, "notify_human", { title: "GPU hot", body: "sim-1 at 90C", severity: "warning", dedup_key: "hot:sim-1" });
    expect(first.mutated).toBe(true);
    const again = await run(deps, "notify_human", { title: "GPU hot", body: "still", severity: "warning", dedup_key: "hot:sim-1" });
    expect(again.mutated).toBe(false);
    expect(await deps.db.select().from(notifications)).toHaveLength(1);
  });

  it("schedule_next_check takes exactly one of in_seconds or at, in the future, within the wake cap", async () => {
    const { deps } = await agentFixture({ vars: { MAX_PENDING_WAKES: "1" } });
    await expectRefused(deps, "schedule_next_check", { reason: "r" }, /exactly one of in_seconds or at/);
    await expectRefused(deps, "schedule_next_check", { in_seconds: 60, at: "2026-01-01T01:00:00Z", reason: "r" }, /exactly one/);
    await expectRefused(deps, "schedule_next_check", { in_seconds: -5, reason: "r" }, /in_seconds/);
    await expectRefused(deps, "schedule_next_check", { at: "tomorrow", reason: "r" }, /at/);
    await expectRefused(deps, "schedule_next_check", { in_seconds: 60 }, /reason/);
    const past = await run(deps, "schedule_next_check", { at: "2025-12-31T00:00:00Z", reason: "r" });
    expect(JSON.parse(past.content).error).toMatch(/future/);
    const made = await run(deps, "schedule_next_check", { in_seconds: 600, reason: "check sim-1 again" });
    expect(made.mutated).toBe(true);
    const [wake] = await deps.db.select().from(wakes);
    expect(wake).toMatchObject({ dueAt: deps.clock.now() + 600_000, reason: "check sim-1 again", createdByRun: 7, status: "pending" });
    const capped = await run(deps, "schedule_next_check", { at: new Date(deps.clock.now() + 60_000).toISOString(), reason: "more" });
    expect(capped.mutated).toBe(false);
    expect(JSON.parse(capped.content).error).toMatch(/pending wake limit/);
  });

  it("cancel_wake needs a numeric id of a pending wake", async () => {
    const { deps } = await agentFixture();
    await expectRefused(deps, "cancel_wake", { id: "one" }, /id/);
    const made = JSON.parse((await run(deps, "schedule_next_check", { in_seconds: 60, reason: "r" })).content);
    expect(JSON.parse((await run(deps, "cancel_wake", { id: made.wakeId + 1 })).content).error).toMatch(/no pending wake/);
    expect(await run(deps, "cancel_wake", { id: made.wakeId })).toMatchObject({ mutated: true });
    expect((await deps.db.select().from(wakes))[0]!.status).toBe("cancelled");
  });

  it("remember and forget validate keys and facts, and memory is capped", async () => {
    const { deps } = await agentFixture();
    await expectRefused(deps, "remember", { key: "has space", fact: "f" }, /key/);
    await expectRefused(deps, "remember", { key: "k", fact: "x".repeat(501) }, /fact/);
    await expectRefused(deps, "forget", {}, /key/);
    expect(await run(deps, "remember", { key: "owner", fact: "alice owns sim-1" })).toMatchObject({ mutated: true });
    expect(JSON.parse((await run(deps, "remember", { key: "owner", fact: "bob owns sim-1" })).content).replaced).toBe(true);
    expect((await deps.db.select().from(memory))[0]!.fact).toBe("bob owns sim-1");
    for (let i = 1; i < MAX_MEMORY_FACTS; i++) await run(deps, "remember", { key: `k${i}`, fact: "f" });
    const full = await run(deps, "remember", { key: "one-more", fact: "f" });
    expect(JSON.parse(full.content).error).toMatch(/memory is full/);
    expect(JSON.parse((await run(deps, "forget", { key: "nobody" })).content).error).toMatch(/no fact/);
    expect(await run(deps, "forget", { key: "owner" })).toMatchObject({ mutated: true });
  });

  it("caps every tool output", async () => {
    const { deps } = await agentFixture({ instances: 200 });
    const listed = await run(deps, "list_instances", {});
    expect(countText(listed.content)).toBeLessThanOrEqual(TOOL_OUTPUT_MAX_TOKENS);
    expect(listed.content).toContain("tool output truncated");
  });

  it("gives the model its validation error and lets it correct itself", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push(
      { tools: [{ name: "notify_human", arguments: { title: "x", body: "y", severity: "urgent" }, id: "bad" }] },
      { tools: [{ name: "notify_human", arguments: { title: "x", body: "y", severity: "critical" }, id: "good" }] },
      { text: "Done." },
    );
    const result = await say(deps, "page someone");
    expect(result).toMatchObject({ decider: "llm", reply: "Done." });
    const feedback = llm.requests[1]!.messages.at(-1)!;
    expect(feedback).toMatchObject({ role: "tool", tool_call_id: "bad" });
    expect(feedback.content).toMatch(/invalid arguments for notify_human: severity/);
    expect(await deps.db.select().from(notifications).where(eq(notifications.severity, "critical"))).toHaveLength(1);
  });

  it("every tool schema the model sees is a JSON object schema", () => {
    for (const tool of CHAT_TOOLS) {
      expect(tool.type).toBe("function");
      if (tool.type === "function") expect(tool.function.parameters).toMatchObject({ type: "object" });
    }
  });
});
