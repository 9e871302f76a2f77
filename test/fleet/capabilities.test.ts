/**
 * A provider that cannot do something is respected everywhere an action is offered, with the
 * simulator wrapped to lack capabilities (test/support/limited-provider.ts, as Lambda has no
 * stop): executeAction records the kind `failed` with the 501 before any provider call, whoever
 * decided (human, rules, model), and never files an approval for it; the model is not offered the
 * tool and a call to it is an error naming the provider and what it lacks; the rules policy
 * tells a human once per exit instead of restarting, and the stuck-loading escalation tells one
 * why no reboot was tried; the fleet API lists the capabilities.
 */
import { describe, expect, it } from "vitest";
import { actions, approvals, notifications, onceNotices } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { chatToolsFor, runToolCall } from "../../agent/tools/index.ts";
import { buildApp } from "../../functions/app.ts";
import type { Capability } from "../../fleet/providers/provider.ts";
import { LimitedProvider } from "../support/limited-provider.ts";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { deliverDue } from "../support/drive.ts";
import { createAgentRunStep } from "../../agent/run-agent.ts";
import { injectSimulatorFailure } from "../../fleet/providers/simulator-reports.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { holdLease } from "../support/held-lease.ts";
import { agentFixture, setInstanceState, trigger } from "../support/agent-fixture.ts";

async function limited(without: Capability[], vars: Record<string, string> = {}) {
  const { deps } = await agentFixture({ vars });
  const provider = new LimitedProvider(deps.provider, without);
  deps.provider = provider;
  return { deps, provider };
}

const names = (tools: ReturnType<typeof chatToolsFor>) => tools.map((t) => ("function" in t ? t.function.name : t.type));
const request = (kind: "stop" | "destroy", decidedBy: "llm" | "rules" | "human", key: string) => ({
  agentId: "default",
  runId: null,
  instanceId: "sim-1",
  kind,
  decidedBy,
  idempotencyKey: key,
});

describe("capabilities: executeAction", () => {
  it("records a kind the provider lacks as failed with the 501, for every decider, calling nothing", async () => {
    const { deps, provider } = await limited(["stop"]);
    for (const decidedBy of ["llm", "rules", "human"] as const) {
      const result = await executeAction(deps, request("stop", decidedBy, `k-${decidedBy}`));
      expect(result, decidedBy).toMatchObject({
        status: "failed",
        repeated: false,
        error: "simulator cannot stop (not a capability of this provider)",
      });
    }
    const rows = await deps.db.select().from(actions);
    expect(rows.map((r) => [r.decidedBy, r.status])).toEqual([
      ["llm", "failed"],
      ["rules", "failed"],
      ["human", "failed"],
    ]);
    expect(rows[0]!.result).toEqual({ providerCalled: false, provider: "simulator", httpStatus: 501, unsupported: "stop" });
    expect(provider.calls).toEqual([]);
    expect((await deps.provider.get("sim-1"))!.state).toBe("running");
    // A repeated key answers with its record and writes nothing.
    expect(await executeAction(deps, request("stop", "llm", "k-llm"))).toMatchObject({ status: "failed", repeated: true });
    expect(await deps.db.select().from(actions)).toHaveLength(3);
  });

  it("never files an approval for what cannot be done (destroy needs approval by default), and the same provider with it acts", async () => {
    const { deps } = await limited(["destroy"]);
    expect(await executeAction(deps, request("destroy", "llm", "d1"))).toMatchObject({
      status: "failed",
      error: expect.stringContaining("simulator cannot destroy"),
    });
    expect(await deps.db.select().from(approvals)).toEqual([]);
    const full = await limited([]);
    expect(await executeAction(full.deps, request("stop", "llm", "s1"))).toMatchObject({ status: "succeeded" });
    expect(full.provider.calls).toEqual(["stop sim-1"]);
  });

  it("an operator's own action the provider lacks is failed through the API, not an approval", async () => {
    const { deps, provider } = await limited(["destroy"]);
    const res = await buildApp(() => deps).request("/api/agents/default/instances/sim-1/actions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ kind: "destroy" }),
    });
    expect((await res.json()).action).toMatchObject({ status: "failed", error: expect.stringContaining("simulator cannot destroy") });
    expect(await deps.db.select().from(approvals)).toEqual([]);
    expect(provider.calls).toEqual([]);
  });
});

describe("capabilities: the model's tools", () => {
  it("offers only the action tools the provider has; a call to one it lacks is an error naming both, and nothing is recorded", async () => {
    const { deps, provider } = await limited(["stop", "logs"]);
    const offered = names(chatToolsFor(deps.provider));
    expect(offered).toContain("start_instance");
    expect(offered).not.toContain("stop_instance");
    expect(offered).not.toContain("get_instance_logs");
    expect(names(chatToolsFor(provider.inner))).toContain("stop_instance");

    const fence = await holdLease(deps, "default", 7);
    const answering = { events: [{ id: 1, source: "human", payload: { text: "stop sim-1" } }], wakes: [] };
    const outcome = await runToolCall(
      { deps, agentId: "default", runId: 7, toolCallId: "c1", fence, answering },
      "stop_instance",
      JSON.stringify({ instance_id: "sim-1", reason: "asked" }),
    );
    expect(outcome).toMatchObject({ invalid: true, mutated: false });
    expect(JSON.parse(outcome.content).error).toBe(
      "stop_instance is not available: simulator cannot stop (not a capability of this provider)",
    );
    expect(await deps.db.select().from(actions)).toEqual([]);
    expect(provider.calls).toEqual([]);
  });
});

describe("capabilities: the rules policy", () => {
  const exit = async (deps: TestDeps) => {
    await setInstanceState(deps, "sim-1", "exited");
    return trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });
  };

  it("does not restart on a provider without start: tells a human once per exit, naming why", async () => {
    const { deps, provider } = await limited(["start"]);
    const run = await exit(deps);
    expect(run).toMatchObject({ decider: "rules", status: "succeeded" });
    expect(provider.calls).toEqual([]);
    expect(await deps.db.select().from(actions)).toEqual([]);
    const [told] = await deps.db.select().from(notifications);
    expect(told).toMatchObject({ title: "Instance sim-1 needs a human: the provider cannot start it", instanceId: "sim-1" });
    expect(told!.body).toContain("simulator cannot start (not a capability of this provider)");

    // The same exit heard about again: no second notice (the once-mark), still no action.
    await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });
    deps.clock.advance(deps.config.notifyDedupWindowMs + 1);
    await trigger(deps, { source: "manual", payload: { instanceId: "sim-1" } });
    expect(await deps.db.select().from(notifications)).toHaveLength(1);
    expect(await deps.db.select().from(onceNotices)).toHaveLength(1);

    // A new exit is a new episode: told again, once.
    await exit(deps);
    expect(await deps.db.select().from(notifications)).toHaveLength(2);
    expect(provider.calls).toEqual([]);
  });
});

describe("capabilities: the fleet API", () => {
  it("GET /api/agents/:agent/instances lists what the provider can do", async () => {
    const { deps } = await limited(["stop", "create"]);
    const body = await (await buildApp(() => deps).request("/api/agents/default/instances", { headers: authHeaders() })).json();
    expect(body.capabilities).toEqual(["start", "reboot", "destroy", "label", "logs", "telemetry"]);
    const full = await agentFixture();
    const all = await (await buildApp(() => full.deps).request("/api/agents/default/instances", { headers: authHeaders() })).json();
    expect(all.capabilities).toEqual(["start", "stop", "reboot", "destroy", "label", "logs", "create", "telemetry"]);
  });
});

describe("capabilities: the stuck-loading escalation", () => {
  it("on a provider without reboot, tries none and tells a human why", async () => {
    const deps = await createTestDeps({ runStep: createAgentRunStep(), vars: { SIMULATOR_FAILURE_RATE: "0" } });
    const sim = deps.provider as SimulatorProvider;
    await sim.seed(1);
    const provider = new LimitedProvider(sim, ["reboot"]);
    deps.provider = provider;
    const minutes = async (n: number) => {
      for (let i = 0; i < n; i++) {
        deps.clock.advance(60_000);
        await runCronTick(deps);
        await deliverDue(deps);
      }
    };
    await minutes(2);
    await injectSimulatorFailure({ ...deps, provider: sim }, "sim-1", "stuck_loading");
    await minutes(17);
    expect(await deps.db.select().from(actions)).toEqual([]);
    expect(provider.calls).toEqual([]);
    const stuck = (await deps.db.select().from(notifications)).filter((n) => n.title === "Instance sim-1 is stuck loading");
    expect(stuck).toHaveLength(1);
    expect(stuck[0]!.body).toContain("no reboot was tried: simulator cannot reboot (not a capability of this provider)");
  });
});
