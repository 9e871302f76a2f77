/**
 * POST /api/agents/:agent/instances/:id/actions: an operator's own action through the app, on a
 * real libSQL database and the simulator. It names the operator on the record, the approval and
 * the activity log; approval rules apply; an Idempotency-Key makes a repeat the recorded result
 * (no second provider call, no second activity row); bad input is a 4xx naming the field and
 * writes nothing; a viewer is refused.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { actions, approvals, operatorActivity } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps } from "../support/test-deps.ts";

async function setup() {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
  await (deps.provider as SimulatorProvider).seed(2);
  await reconcileFleet(deps, "default");
  const now = deps.clock.now();
  const op = (await createOperator(deps.db, { name: "ada", role: "operator", createdBy: "admin", now })).token;
  const viewer = (await createOperator(deps.db, { name: "vic", role: "viewer", createdBy: "admin", now })).token;
  const app = buildApp(() => deps);
  const post = (id: string, body: unknown, token = op, headers: Record<string, string> = {}) =>
    app.request(`/api/agents/default/instances/${id}/actions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  return { deps, post, viewer, app, op };
}

describe("operator's own instance action", () => {
  it("acts, names the operator on the record and the activity log, and a repeated key is one action", async () => {
    const { deps, post, app, op } = await setup();
    const key = { "Idempotency-Key": "stop-sim-1-once" };
    const first = await post("sim-1", { kind: "stop", note: "saving money" }, undefined, key);
    expect(first.status).toBe(200);
    expect((await first.json()).action).toMatchObject({ status: "succeeded", repeated: false });
    const again = await post("sim-1", { kind: "stop", note: "saving money" }, undefined, key);
    expect((await again.json()).action).toMatchObject({ status: "succeeded", repeated: true });
    expect((await deps.provider.get("sim-1"))!.state).toBe("stopped");
    const rows = await deps.db.select().from(actions);
    expect(rows.map((a) => [a.kind, a.decidedBy, a.operator, a.reason, a.idempotencyKey])).toEqual([
      ["stop", "human", "ada", "saving money", "api:stop-sim-1-once"],
    ]);
    expect((await deps.db.select().from(operatorActivity)).map((r) => [r.operatorName, r.action, r.agentId, r.subject])).toEqual([
      ["ada", "instance_action", "default", `stop sim-1 #${rows[0]!.id}`],
    ]);
    // The audit names the operator as the decider.
    const audit = await app.request("/api/agents/default/actions", { headers: { Authorization: `Bearer ${op}` } });
    expect((await audit.json()).actions[0]).toMatchObject({ operator: "ada", decider: "ada" });
    // Without a key each post is its own action.
    await post("sim-1", { kind: "start" });
    await post("sim-1", { kind: "start" });
    expect(await deps.db.select().from(actions)).toHaveLength(3);
  });

  it("applies the approval rules: destroy becomes an approval requested by the operator", async () => {
    const { deps, post } = await setup();
    const res = await post("sim-2", { kind: "destroy" });
    expect(res.status).toBe(202);
    expect((await res.json()).action).toMatchObject({ status: "awaiting_approval" });
    expect((await deps.provider.get("sim-2"))!.state).toBe("running");
    const [approval] = await deps.db.select().from(approvals);
    expect(approval).toMatchObject({ kind: "destroy", instanceId: "sim-2", requestedBy: "ada", status: "pending" });
    expect((await deps.db.select().from(actions))[0]).toMatchObject({ status: "awaiting_approval", operator: "ada" });
  });

  it("labels an instance, and refuses bad input with a 4xx naming the problem, writing nothing", async () => {
    const { deps, post, viewer } = await setup();
    const cases: [string, unknown, number, RegExp, Record<string, string>?][] = [
      ["sim-1", { kind: "explode" }, 400, /kind: must be one of start, stop, reboot, destroy, label/],
      ["sim-1", { kind: "label" }, 400, /label: a label action needs a label/],
      ["sim-1", { kind: "stop", note: "x".repeat(501) }, 400, /note: must be at most 500 characters/],
      ["sim-1", { kind: "stop" }, 400, /Idempotency-Key header: must be 8-128 word characters/, { "Idempotency-Key": "no spaces!" }],
      ["ghost", { kind: "stop" }, 404, /unknown instance: ghost/],
    ];
    for (const [id, body, status, error, headers] of cases) {
      const res = await post(id, body, undefined, headers);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect((await res.json()).error).toMatch(error);
    }
    const refused = await post("sim-1", { kind: "stop" }, viewer);
    expect(refused.status).toBe(403);
    expect(await deps.db.select().from(actions)).toHaveLength(0);
    expect(await deps.db.select().from(operatorActivity)).toHaveLength(0);
    expect((await post("sim-1", { kind: "label", label: "training-run" })).status).toBe(200);
    expect((await deps.provider.get("sim-1"))!.label).toBe("training-run");
  });
});
