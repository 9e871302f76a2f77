/**
 * A provider outage in the middle of a run: the run still finishes (succeeded), every failed
 * action is recorded and listed, and the provider is called a bounded number of times even when
 * the step keeps trying.
 */
import { describe, expect, it } from "vitest";
import { executeAction } from "../../fleet/actions/actions.ts";
import { ProviderError } from "../../fleet/providers/provider.ts";
import { buildApp } from "../../functions/app.ts";
import { performRun } from "../../pipeline/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { authHeaders } from "../support/test-deps.ts";
import { fleetFixture } from "./fleet-fixture.ts";
import type { AgentRunStep } from "../../jobs/deps.ts";

/** A step that, like an agent in a tool loop, keeps trying to restart sim-1 (20 tool calls). */
const stubbornStep: AgentRunStep = async ({ deps, agentId, runId }) => {
  let mutated = false;
  const errors: string[] = [];
  for (let call = 0; call < 20; call++) {
    const result = await executeAction(deps, {
      agentId,
      runId,
      instanceId: "sim-1",
      kind: "reboot",
      decidedBy: "llm",
      idempotencyKey: `run${runId}:call${call}`,
      reason: "sim-1 is unresponsive",
    });
    mutated ||= result.status === "succeeded";
    if (result.error) errors.push(result.error);
  }
  return {
    decider: "llm",
    mutated,
    reply: null,
    promptTokens: 0,
    completionTokens: 0,
    contextTokens: 0,
    compaction: null,
    ...(errors.length ? { error: errors[0] } : {}),
  };
};

describe("provider outage during a run", () => {
  it("the run succeeds, the failures are recorded and listed, and the provider is called a bounded number of times", async () => {
    // The run bound (LLM_ACTIONS_PER_RUN) is raised so the per-instance quota is what bounds here.
    const { deps, provider, scheduler } = await fleetFixture({ LLM_ACTIONS_PER_RUN: "100" }, stubbornStep);
    provider.outage = new ProviderError("Vast.ai API unavailable (HTTP 503)", 503, true);

    await ingestEvent(deps, {
      agentId: "default",
      source: "manual",
      priority: 0,
      dedupKey: "outage-1",
      payload: { reason: "check the fleet" },
    });
    deps.clock.advance(deps.config.debounceHumanMs);
    const [delivery] = scheduler.takeDue(deps.clock.now());
    expect(delivery!.body.type).toBe("run");
    const body = delivery!.body as { type: "run"; agentId: string; slot: number };
    expect(await performRun(deps, body.agentId, body.slot)).toBe("succeeded");

    // Bounded by the hourly per-instance quota (6 by default), not by how often the step tried.
    expect(provider.calls).toEqual(Array(6).fill("reboot sim-1"));

    const app = buildApp(() => deps);
    const runs = (await (await app.request("/api/agents/default/runs", { headers: authHeaders() })).json()) as {
      runs: Record<string, unknown>[];
    };
    expect(runs.runs[0]).toMatchObject({ runId: 1, status: "succeeded", error: "Vast.ai API unavailable (HTTP 503)" });

    const listed = (await (await app.request("/api/agents/default/actions?limit=200", { headers: authHeaders() })).json()) as {
      actions: { runId: number; status: string; error: string | null; result: Record<string, unknown> | null }[];
    };
    expect(listed.actions).toHaveLength(20);
    expect(listed.actions.every((a) => a.runId === 1)).toBe(true);
    const failed = listed.actions.filter((a) => a.status === "failed");
    expect(failed).toHaveLength(6);
    expect(failed[0]).toMatchObject({
      error: "Vast.ai API unavailable (HTTP 503)",
      result: { providerCalled: true, httpStatus: 503, retryable: true },
    });
    expect(listed.actions.filter((a) => a.status === "rate_limited")).toHaveLength(14);

    // A run whose actions all failed mutated nothing: no follow-up run, nothing published.
    expect(scheduler.published).toEqual([]);
  });

  it("a single failing action mid-run is recorded once and the run carries on", async () => {
    const step: AgentRunStep = async ({ deps, agentId, runId }) => {
      const first = await executeAction(deps, {
        agentId,
        runId,
        instanceId: "sim-1",
        kind: "stop",
        decidedBy: "llm",
        idempotencyKey: `r${runId}:stop`,
      });
      provider.outage = null; // the provider comes back
      const second = await executeAction(deps, {
        agentId,
        runId,
        instanceId: "sim-2",
        kind: "stop",
        decidedBy: "llm",
        idempotencyKey: `r${runId}:stop2`,
      });
      return {
        decider: "llm",
        mutated: second.status === "succeeded",
        reply: `${first.status}, ${second.status}`,
        promptTokens: 0,
        completionTokens: 0,
        contextTokens: 0,
        compaction: null,
      };
    };
    const { deps, provider, scheduler } = await fleetFixture({}, step);
    provider.outage = new ProviderError("connection reset", null, true);
    await ingestEvent(deps, {
      agentId: "default",
      source: "reconcile",
      priority: 1,
      dedupKey: "outage-2",
      payload: { instanceId: "sim-1", state: "exited" },
    });
    deps.clock.advance(deps.config.debounceStateMs);
    const body = scheduler.takeDue(deps.clock.now())[0]!.body as { type: "run"; agentId: string; slot: number };
    expect(await performRun(deps, body.agentId, body.slot)).toBe("succeeded");
    expect(provider.calls).toEqual(["stop sim-1", "stop sim-2"]);
    const runs = (await (await buildApp(() => deps).request("/api/agents/default/runs", { headers: authHeaders() })).json()) as {
      runs: { reply: string; status: string }[];
    };
    expect(runs.runs[0]).toMatchObject({ status: "succeeded", reply: "failed, succeeded" });
  });
});
