/**
 * Shadow mode applies to decisions made without a human (issue #32): an operator's own action
 * behaves the same in both modes. In shadow mode an operator's stop acts, and the same operator's
 * destroy files its approval and pages a human (it used to answer 200 "proposed", file nothing
 * and page nobody); a human approving it destroys the instance. The LLM's destroy in shadow mode
 * stays a proposal: nothing filed, nobody paged, the provider untouched.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { actions, approvals, notifications } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps } from "../support/test-deps.ts";

async function setup(mode: "shadow" | "act") {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0", AGENT_MODE: mode } });
  await (deps.provider as SimulatorProvider).seed(2);
  await reconcileFleet(deps, "default");
  const now = deps.clock.now();
  const ada = (await createOperator(deps.db, { name: "ada", role: "operator", createdBy: "admin", now })).token;
  const bob = (await createOperator(deps.db, { name: "bob", role: "operator", createdBy: "admin", now })).token;
  const app = buildApp(() => deps);
  const call = (path: string, token: string, body: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  return { deps, ada, bob, call };
}

describe("a human's own action in shadow mode", () => {
  for (const mode of ["act", "shadow"] as const) {
    it(`AGENT_MODE=${mode}: an operator's stop acts, their destroy files an approval and pages, and approving it destroys`, async () => {
      const { deps, ada, bob, call } = await setup(mode);
      const stop = await call("/api/agents/default/instances/sim-1/actions", ada, { kind: "stop" });
      expect(stop.status).toBe(200);
      expect((await stop.json()).action).toMatchObject({ status: "succeeded" });
      expect((await deps.provider.get("sim-1"))!.state).toBe("stopped");

      const destroy = await call("/api/agents/default/instances/sim-2/actions", ada, { kind: "destroy", note: "burning money" });
      expect(destroy.status).toBe(202);
      const { action } = await destroy.json();
      expect(action).toMatchObject({ status: "awaiting_approval" });
      const [approval] = await deps.db.select().from(approvals);
      expect(approval).toMatchObject({ kind: "destroy", instanceId: "sim-2", status: "pending", requestedByOperator: "ada" });
      expect(await deps.db.select().from(notifications).where(eq(notifications.approvalId, approval!.id))).toHaveLength(1);
      expect((await deps.provider.get("sim-2"))!.state).toBe("running");

      const approved = await call(`/api/agents/default/approvals/${approval!.id}`, bob, { decision: "approve" });
      expect(approved.status).toBe(200);
      expect((await approved.json()).action).toMatchObject({ status: "succeeded" });
      expect((await deps.provider.get("sim-2")) ?? { state: "gone" }).not.toMatchObject({ state: "running" });
    });
  }

  it("the LLM's destroy in shadow mode is still only proposed: nothing filed, nobody paged", async () => {
    const { deps } = await setup("shadow");
    const result = await executeAction(deps, {
      agentId: "default",
      runId: 1,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "llm:destroy",
    });
    expect(result).toMatchObject({ status: "proposed" });
    expect(await deps.db.select().from(approvals)).toEqual([]);
    expect(await deps.db.select().from(notifications)).toEqual([]);
    expect((await deps.db.select().from(actions)).map((a) => a.status)).toEqual(["proposed"]);
  });
});
