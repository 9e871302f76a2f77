/**
 * Approvals: a destructive action becomes a pending approval (who/what/why) instead of a call;
 * approving executes it exactly once, rejecting never does, and either decision reaches the
 * agent as an inbox event.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { executeAction } from "../../fleet/actions/actions.ts";
import type { ActionRequest } from "../../fleet/actions/action-types.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { actions, approvals, events, instances, notifications } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders } from "../support/test-deps.ts";
import { fleetFixture } from "./fleet-fixture.ts";

const destroy: ActionRequest = {
  agentId: "default",
  runId: 7,
  instanceId: "sim-2",
  kind: "destroy",
  decidedBy: "llm",
  idempotencyKey: "run7:destroy:sim-2",
  reason: "crash-looping for 3 hours",
};

const post = (body: unknown) => ({ method: "POST", headers: authHeaders(), body: JSON.stringify(body) });

describe("approval requests", () => {
  it("records a pending approval instead of calling the provider, and tells a human", async () => {
    const { deps, provider } = await fleetFixture();
    const result = await executeAction(deps, destroy);
    expect(result).toEqual({ actionId: expect.any(Number), status: "awaiting_approval", repeated: false, approvalId: expect.any(Number) });
    expect(provider.calls).toEqual([]);

    const res = await buildApp(() => deps).request("/api/agents/default/approvals?status=pending", { headers: authHeaders() });
    const { approvals } = (await res.json()) as { approvals: Record<string, unknown>[] };
    expect(approvals).toEqual([
      expect.objectContaining({
        id: result.approvalId,
        status: "pending",
        requestedBy: "llm",
        runId: 7,
        kind: "destroy",
        instanceId: "sim-2",
        reason: "crash-looping for 3 hours",
        actionId: result.actionId,
        execution: null,
      }),
    ]);
    const [note] = await deps.db.select().from(notifications);
    expect(note).toMatchObject({ title: "Approval needed: destroy sim-2", severity: "warning", runId: 7 });
    expect(note!.body).toContain("crash-looping for 3 hours");
  });

  it("does not duplicate the approval or the page when the request is repeated", async () => {
    const { deps } = await fleetFixture();
    const first = await executeAction(deps, destroy);
    const again = await executeAction(deps, destroy);
    expect(again).toEqual({ ...first, repeated: true });
    expect((await deps.db.select().from(notifications)).length).toBe(1);
    const res = await buildApp(() => deps).request("/api/agents/default/approvals", { headers: authHeaders() });
    expect(((await res.json()) as { approvals: unknown[] }).approvals).toHaveLength(1);
  });

  it("follows the configured list of kinds", async () => {
    const { deps, provider } = await fleetFixture({ APPROVAL_REQUIRED_ACTIONS: "stop, reboot" });
    expect((await executeAction(deps, { ...destroy, kind: "stop", idempotencyKey: "s" })).status).toBe("awaiting_approval");
    expect((await executeAction(deps, destroy)).status).toBe("succeeded");
    expect(provider.calls).toEqual(["destroy sim-2"]);
  });

  it("lets a human-decided action through without an approval", async () => {
    const { deps, provider } = await fleetFixture();
    expect((await executeAction(deps, { ...destroy, decidedBy: "human" })).status).toBe("succeeded");
    expect(provider.calls).toEqual(["destroy sim-2"]);
  });
});

describe("POST /api/agents/:agent/approvals/:id", () => {
  it("approve executes the action once, and the decision becomes an inbox event that requests a run", async () => {
    const { deps, provider, scheduler } = await fleetFixture();
    const app = buildApp(() => deps);
    const { approvalId, actionId } = await executeAction(deps, destroy);

    const res = await app.request(`/api/agents/default/approvals/${approvalId}`, post({ decision: "approve", note: "yes, it's dead" }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { approval: Record<string, unknown>; action: Record<string, unknown> };
    expect(body.approval).toMatchObject({
      id: approvalId,
      status: "approved",
      note: "yes, it's dead",
      decidedAt: new Date(deps.clock.now()).toISOString(),
    });
    expect(body.action).toMatchObject({ status: "succeeded", repeated: false, approvalId });
    expect(provider.calls).toEqual(["destroy sim-2"]);
    const [instance] = await deps.db.select().from(instances).where(eq(instances.id, "sim-2"));
    expect(instance).toMatchObject({ state: "offline", goneAt: deps.clock.now() });

    // The audit: the request (now approved) and the human-decided execution linked to it.
    const rows = await deps.db.select().from(actions).orderBy(actions.id);
    expect(rows.map((r) => [r.id === actionId, r.decidedBy, r.status, r.approvalId, r.idempotencyKey])).toEqual([
      [true, "llm", "approved", approvalId, "run7:destroy:sim-2"],
      [false, "human", "succeeded", approvalId, `approval:${approvalId}`],
    ]);

    const [event] = await deps.db.select().from(events);
    expect(event).toMatchObject({ source: "approval", priority: 0, dedupKey: `approval:${approvalId}`, status: "pending" });
    expect(event!.payload).toMatchObject({
      approvalId,
      decision: "approve",
      note: "yes, it's dead",
      kind: "destroy",
      instanceId: "sim-2",
      action: { status: "succeeded" },
    });
    expect(scheduler.published.map((p) => p.body.type)).toContain("run");

    // The same decision again is answered with the outcome, and nothing acts twice.
    const twice = await app.request(`/api/agents/default/approvals/${approvalId}`, post({ decision: "approve" }));
    expect(twice.status).toBe(200);
    expect(((await twice.json()) as { action: unknown }).action).toMatchObject({ status: "succeeded", repeated: true });
    expect(provider.calls).toHaveLength(1);
    expect(await deps.db.select().from(events)).toHaveLength(1);
    // The opposite decision is refused.
    const reversed = await app.request(`/api/agents/default/approvals/${approvalId}`, post({ decision: "reject" }));
    expect(reversed.status).toBe(409);
    expect(await reversed.json()).toEqual({ error: `approval ${approvalId} is already approved` });

    // The tool repeating its original request learns the outcome, without a call.
    expect(await executeAction(deps, destroy)).toMatchObject({ actionId, status: "succeeded", repeated: true });
    expect(provider.calls).toHaveLength(1);

    const listed = await app.request("/api/agents/default/approvals?status=approved", { headers: authHeaders() });
    const { approvals } = (await listed.json()) as { approvals: { execution: unknown }[] };
    expect(approvals[0]!.execution).toMatchObject({ status: "succeeded" });
  });

  it("reject never calls the provider and still tells the agent", async () => {
    const { deps, provider } = await fleetFixture();
    const app = buildApp(() => deps);
    const { approvalId, actionId } = await executeAction(deps, destroy);
    const res = await app.request(
      `/api/agents/default/approvals/${approvalId}`,
      post({ decision: "reject", note: "it holds a checkpoint" }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { approval: Record<string, unknown>; action?: unknown };
    expect(body.approval).toMatchObject({ status: "rejected", note: "it holds a checkpoint" });
    expect(body.action).toBeUndefined();
    expect(provider.calls).toEqual([]);

    const [event] = await deps.db.select().from(events);
    expect(event!.payload).toMatchObject({ approvalId, decision: "reject", note: "it holds a checkpoint", action: null });
    expect(await executeAction(deps, destroy)).toMatchObject({
      actionId,
      status: "failed",
      repeated: true,
      error: "rejected by a human: it holds a checkpoint",
    });
    expect((await app.request(`/api/agents/default/approvals/${approvalId}`, post({ decision: "approve" }))).status).toBe(409);
    expect(provider.calls).toEqual([]);
  });

  it("records a failed execution when the provider is down at approval time", async () => {
    const { deps, provider } = await fleetFixture();
    const { approvalId } = await executeAction(deps, destroy);
    const { ProviderError } = await import("../../fleet/providers/provider.ts");
    provider.outage = new ProviderError("Vast.ai API unavailable (HTTP 503)", 503, true);
    const decided = await decideApproval(deps, "default", approvalId!, "approve");
    expect(decided.action).toMatchObject({ status: "failed", error: "Vast.ai API unavailable (HTTP 503)" });
    const [event] = await deps.db.select().from(events);
    expect(event!.payload).toMatchObject({ action: { status: "failed", error: "Vast.ai API unavailable (HTTP 503)" } });
    expect(provider.calls).toHaveLength(1);
  });

  it("answers 400 naming the field, 404 for unknown ids and agents, and writes nothing", async () => {
    const { deps } = await fleetFixture();
    const app = buildApp(() => deps);
    const { approvalId } = await executeAction(deps, destroy);
    const cases: [string, RequestInit, number, RegExp][] = [
      [`/api/agents/default/approvals/${approvalId}`, post({ decision: "maybe" }), 400, /^invalid body: decision/],
      [`/api/agents/default/approvals/${approvalId}`, post({}), 400, /^invalid body: decision/],
      [`/api/agents/default/approvals/${approvalId}`, post({ decision: "approve", note: "x".repeat(1001) }), 400, /^invalid body: note/],
      [`/api/agents/default/approvals/${approvalId}`, { method: "POST", headers: authHeaders(), body: "{not json" }, 400, /JSON|json/],
      ["/api/agents/default/approvals/abc", post({ decision: "approve" }), 400, /^invalid param: id/],
      ["/api/agents/default/approvals/999", post({ decision: "approve" }), 404, /^unknown approval: 999$/],
      [`/api/agents/ghost/approvals/${approvalId}`, post({ decision: "approve" }), 404, /^unknown agent: ghost$/],
      ["/api/agents/default/approvals?status=maybe", { headers: authHeaders() }, 400, /^invalid query: status/],
    ];
    for (const [path, init, status, error] of cases) {
      const res = await app.request(path, init);
      expect(res.status, path).toBe(status);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
    }
    const [approval] = (await (await app.request("/api/agents/default/approvals", { headers: authHeaders() })).json()).approvals as {
      status: string;
    }[];
    expect(approval!.status).toBe("pending");
    expect(await deps.db.select().from(events)).toEqual([]);
  });

  it("does not decide another agent's approval", async () => {
    const { deps, provider } = await fleetFixture();
    const { ensureAgent } = await import("../../pipeline/index.ts");
    await ensureAgent(deps.db, "other", deps.clock.now());
    const { approvalId } = await executeAction(deps, destroy);
    const res = await buildApp(() => deps).request(`/api/agents/other/approvals/${approvalId}`, post({ decision: "approve" }));
    expect(res.status).toBe(404);
    expect(provider.calls).toEqual([]);
  });
});

describe("an approval interrupted after its decision was stored", () => {
  it("is completed by repeating the decision: the action runs once and the agent hears of it", async () => {
    const { deps, provider } = await fleetFixture();
    const app = buildApp(() => deps);
    const { approvalId } = await executeAction(deps, destroy);
    // the process died right after storing the decision, before executing it
    await deps.db.update(approvals).set({ status: "approved", decidedAt: deps.clock.now() }).where(eq(approvals.id, approvalId!));
    expect(provider.calls).toEqual([]);

    const retried = await app.request(`/api/agents/default/approvals/${approvalId}`, post({ decision: "approve" }));
    expect(retried.status).toBe(200);
    expect(provider.calls).toEqual(["destroy sim-2"]);
    const [event] = await deps.db.select().from(events);
    expect(event).toMatchObject({ source: "approval", dedupKey: `approval:${approvalId}` });
  });
});
