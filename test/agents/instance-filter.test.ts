/**
 * Several agents sharing one provider account: each agent's `instanceFilter` (label prefix or
 * explicit ids) limits what reconciliation records, what the list tool shows and what the action
 * tools may touch. Real libSQL, the simulated provider, the real tick and action code.
 */
import { describe, expect, it } from "vitest";
import { runToolCall } from "../../agent/tools/index.ts";
import type { ToolContext } from "../../agent/tools/tool.ts";
import { buildApp } from "../../functions/app.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function sharedAccount() {
  const deps = await createTestDeps();
  const sim = deps.provider as SimulatorProvider;
  await sim.seed(4);
  await sim.setLabel("sim-1", "a-trainer");
  await sim.setLabel("sim-2", "a-eval");
  const app = buildApp(() => deps);
  const post = (body: unknown) => app.request("/api/agents", { method: "POST", headers: authHeaders(), body: JSON.stringify(body) });
  expect((await post({ id: "team-a", settings: { instanceFilter: { labelPrefix: "a-" } } })).status).toBe(201);
  expect((await post({ id: "team-b", settings: { instanceFilter: { ids: ["sim-3"] } } })).status).toBe(201);
  const instancesOf = async (agentId: string) => {
    const res = await app.request(`/api/agents/${agentId}/instances`, { headers: authHeaders() });
    return ((await res.json()) as { instances: { id: string }[] }).instances.map((i) => i.id).sort();
  };
  return { deps, sim, instancesOf };
}

describe("instance filter", () => {
  it("reconciliation records only the agent's own instances", async () => {
    const { deps, instancesOf } = await sharedAccount();
    await runCronTick(deps);
    expect(await instancesOf("team-a")).toEqual(["sim-1", "sim-2"]);
    expect(await instancesOf("team-b")).toEqual(["sim-3"]);
    expect(await instancesOf("default")).toEqual(["sim-1", "sim-2", "sim-3", "sim-4"]);
  });

  it("the list tool shows only the agent's instances", async () => {
    const { deps } = await sharedAccount();
    const scope = (await withAgent(deps, "team-a"))!;
    // Only deps and agentId matter to a read-only tool; the run's fence and answers are unused.
    const context = { deps: scope.deps, agentId: "team-a" } as unknown as ToolContext;
    const outcome = await runToolCall(context, "list_instances", "{}");
    const listed = JSON.parse(outcome.content) as { instances: { id: string }[] };
    expect(listed.instances.map((i) => i.id)).toEqual(["sim-1", "sim-2"]);
  });

  it("an action on another agent's instance is refused and the provider is not touched", async () => {
    const { deps, sim } = await sharedAccount();
    const teamB = (await withAgent(deps, "team-b"))!.deps;
    const refused = await executeAction(teamB, {
      agentId: "team-b",
      runId: null,
      instanceId: "sim-1",
      kind: "stop",
      decidedBy: "human",
      idempotencyKey: "k1",
    });
    expect(refused.status).toBe("failed");
    expect(refused.error).toContain("not this agent's");
    expect((await sim.get("sim-1"))!.state).toBe("running");

    const own = await executeAction(teamB, {
      agentId: "team-b",
      runId: null,
      instanceId: "sim-3",
      kind: "stop",
      decidedBy: "human",
      idempotencyKey: "k2",
    });
    expect(own.status).toBe("succeeded");
    expect((await sim.get("sim-3"))!.state).toBe("stopped");
  });
});
