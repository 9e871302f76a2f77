/**
 * Invariant 8, fenced effects: every write a run makes commits only while it holds a live lease;
 * a run past its lease, or whose events another run re-claimed, changes nothing; a re-claiming
 * run that decides the same action finds it recorded; a late LLM answer is not acted on; a
 * provider's retries stop when the lease runs out.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actions, agents, approvals, memory, notifications, runs, wakes } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { createWake, cancelWake } from "../../pipeline/index.ts";
import { forget, remember } from "../../agent/memory.ts";
import { FenceLostError, renewLease } from "../../pipeline/index.ts";
import { recoverDeadLease } from "../../pipeline/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { runToolCall } from "../../agent/tools/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { holdLease } from "../support/held-lease.ts";
import { deliverDue } from "../support/drive.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { fleetFixture } from "../actions/fleet-fixture.ts";
import { startVastServer, vastInstance } from "../fleet/vast-server.ts";
import { agentFixture, answerAfterTheLease, latestRun, scriptedLlm, say } from "../agent/harness.ts";
import type { AgentRunContext } from "../../jobs/deps.ts";

async function counts(deps: TestDeps) {
  const n = async (t: typeof actions | typeof approvals | typeof notifications | typeof wakes | typeof memory) =>
    (await deps.db.select().from(t)).length;
  return {
    actions: await n(actions),
    approvals: await n(approvals),
    notifications: await n(notifications),
    wakes: await n(wakes),
    memory: await n(memory),
  };
}

const tool = (context: AgentRunContext, name: string, args: Record<string, unknown>) =>
  runToolCall(
    {
      deps: context.deps,
      agentId: context.agentId,
      runId: context.runId,
      toolCallId: `t-${name}`,
      fence: context.fence,
      answering: context,
    },
    name,
    JSON.stringify(args),
  );

async function webhookEvent(deps: TestDeps, instanceId: string) {
  await ingestEvent(deps, {
    agentId: "default",
    source: "webhook",
    priority: 1,
    dedupKey: `wh:${instanceId}:${deps.clock.now()}`,
    payload: { instanceId, state: "exited" },
  });
  deps.clock.advance(deps.config.debounceStateMs);
}

describe("fenced effects", () => {
  it("a run past its lease records no action, approval, wake, notification or memory write", async () => {
    const { deps, provider } = await fleetFixture();
    await remember(deps, "default", "kept", "a fact from before", null);
    const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 60_000, reason: "later", createdByRun: null });
    const fence = await holdLease(deps, "default", 1);
    deps.clock.advance(deps.config.runLeaseMs); // the lease has expired; nobody re-claimed yet
    const before = await counts(deps);
    const request = { agentId: "default", runId: 1, instanceId: "sim-1", decidedBy: "llm" as const, idempotencyKey: "k", fence };

    await expect(executeAction(deps, { ...request, kind: "reboot" })).rejects.toThrow(FenceLostError);
    await expect(executeAction(deps, { ...request, kind: "destroy", idempotencyKey: "k2" })).rejects.toThrow(FenceLostError);
    await expect(createWake(deps, "default", { dueAt: deps.clock.now() + 60_000, reason: "x", createdByRun: 1, fence })).rejects.toThrow(
      FenceLostError,
    );
    await expect(cancelWake(deps, "default", wake.id, fence)).rejects.toThrow(FenceLostError);
    await expect(notifyHuman(deps, { agentId: "default", runId: 1, title: "t", body: "b", severity: "warning", fence })).rejects.toThrow(
      FenceLostError,
    );
    await expect(remember(deps, "default", "new", "fact", fence)).rejects.toThrow(FenceLostError);
    await expect(forget(deps, "default", "kept", fence)).rejects.toThrow(FenceLostError);

    expect(provider.calls).toEqual([]);
    expect(await counts(deps)).toEqual(before);
    const [w] = await deps.db.select().from(wakes).where(eq(wakes.id, wake.id));
    expect(w!.status).toBe("pending");
  });

  it("the same writes commit while the lease is live", async () => {
    const { deps, provider } = await fleetFixture();
    const fence = await holdLease(deps, "default", 1);
    deps.clock.advance(deps.config.runLeaseMs - 1);
    const result = await executeAction(deps, {
      agentId: "default",
      runId: 1,
      instanceId: "sim-1",
      kind: "reboot",
      decidedBy: "llm",
      idempotencyKey: "k",
      fence,
    });
    expect(result.status).toBe("succeeded");
    await createWake(deps, "default", { dueAt: deps.clock.now() + 60_000, reason: "x", createdByRun: 1, fence });
    await remember(deps, "default", "new", "fact", fence);
    expect(provider.calls).toEqual(["reboot sim-1"]);
    expect(await counts(deps)).toMatchObject({ actions: 1, wakes: 1, memory: 1 });
  });

  it("a run whose events another run re-claimed changes nothing, and its crashed record says why", async () => {
    let invocation = 0;
    const { deps, provider } = await fleetFixture({}, async (context) => {
      invocation++;
      if (invocation === 1) {
        await tool(context, "remember", { key: "seen", fact: "first run was here" });
        // The first run stalls past its lease; meanwhile the cron recovers it and a new run acts.
        const d = context.deps as TestDeps;
        d.clock.advance(d.config.runLeaseMs + 1);
        await recoverDeadLease(d, "default");
        await deliverDue(d);
      }
      const outcome = await tool(context, "reboot_instance", { instance_id: "sim-1", reason: "exited" });
      // The stale run's reboot answers the same events: it finds the new run's action recorded.
      if (context.runId === 1) expect(JSON.parse(outcome.content)).toMatchObject({ repeated: true });
      await tool(context, "schedule_next_check", { in_seconds: 300, reason: `check sim-1 (run ${context.runId})` });
      return {
        decider: "llm",
        mutated: outcome.mutated,
        reply: null,
        promptTokens: 0,
        completionTokens: 0,
        contextTokens: 0,
        compaction: null,
      };
    });
    await webhookEvent(deps, "sim-1");
    await deliverDue(deps);

    expect(provider.calls).toEqual(["reboot sim-1"]);
    const rows = await deps.db.select().from(runs).orderBy(runs.runId);
    expect(rows.map((r) => r.status)).toEqual(["crashed", "succeeded"]);
    expect(rows[0]!.error).toMatch(/no longer holds a live lease: creating a wake was refused/);
    expect(await deps.db.select().from(actions)).toHaveLength(1);
    expect((await deps.db.select().from(wakes)).map((w) => w.createdByRun)).toEqual([2]);
  });

  it("a re-claiming run that decides the same action finds it recorded instead of acting again", async () => {
    let invocation = 0;
    const { deps, provider } = await fleetFixture({}, async (context) => {
      invocation++;
      const outcome = await tool(context, "reboot_instance", { instance_id: "sim-1", reason: "exited" });
      if (invocation === 1) throw new Error("the run died after acting");
      expect(JSON.parse(outcome.content)).toMatchObject({ status: "succeeded", repeated: true });
      return {
        decider: "llm",
        mutated: outcome.mutated,
        reply: null,
        promptTokens: 0,
        completionTokens: 0,
        contextTokens: 0,
        compaction: null,
      };
    });
    await webhookEvent(deps, "sim-1");
    await deliverDue(deps);
    deps.clock.advance(deps.config.debounceStateMs);
    await deliverDue(deps);

    expect(invocation).toBe(2);
    expect(provider.calls).toEqual(["reboot sim-1"]);
    const rows = await deps.db.select().from(runs).orderBy(runs.runId);
    expect(rows.map((r) => r.status)).toEqual(["failed", "succeeded"]);
  });

  it("renews the lease while held, and refuses to renew a lease that expired", async () => {
    const { deps } = await fleetFixture();
    const fence = await holdLease(deps, "default", 1);
    deps.clock.advance(deps.config.runLeaseMs / 2);
    await renewLease(deps, fence);
    const [agent] = await deps.db.select().from(agents).where(eq(agents.id, "default"));
    expect(agent!.leaseExpiresAt).toBe(deps.clock.now() + deps.config.runLeaseMs);
    expect(fence.leaseExpiresAt).toBe(agent!.leaseExpiresAt);
    deps.clock.advance(deps.config.runLeaseMs);
    await expect(renewLease(deps, fence)).rejects.toThrow(FenceLostError);
  });

  it("does not act on an LLM answer that arrives after the run's deadline", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    answerAfterTheLease(deps);
    llm.push({
      tools: [
        { name: "reboot_instance", arguments: { instance_id: "sim-1", reason: "late" } },
        { name: "schedule_next_check", arguments: { in_seconds: 60, reason: "late" } },
      ],
    });
    await say(deps, "reboot sim-1");
    const run = await latestRun(deps);
    expect(await deps.db.select().from(actions)).toHaveLength(0);
    expect(await deps.db.select().from(wakes)).toHaveLength(0);
    expect(run!.error).toMatch(/after the run's deadline; its 2 tool call\(s\) were not executed/);
  });

  it("stops a provider call's retries when the run's lease runs out", async () => {
    const deadline = new AbortController();
    const server = await startVastServer({
      instances: [vastInstance(9)],
      intercept: () => {
        deadline.abort(); // the lease runs out while the first attempt is answered
        return { status: 503, body: { error: "busy" } };
      },
    });
    try {
      const vast = new VastProvider({ apiKey: "vast-test-key", baseUrl: server.url, sleep: async () => {}, maxAttempts: 4 });
      await expect(vast.reboot("9", { signal: deadline.signal })).rejects.toThrow(/deadline passed after 1 attempt/);
      expect(server.requests).toHaveLength(1);
      await expect(vast.reboot("9")).rejects.toThrow(/503/);
      expect(server.requests).toHaveLength(5); // without a deadline: all four attempts
    } finally {
      await server.close();
    }
  });
});
