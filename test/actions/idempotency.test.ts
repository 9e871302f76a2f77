/** executeAction: one provider call per idempotency key, and every action in the audit. */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { executeAction, listActions } from "../../fleet/actions/actions.ts";
import type { ActionRequest } from "../../fleet/actions/action-types.ts";
import { events, instanceEvents, instances } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders } from "../support/test-deps.ts";
import { fleetFixture } from "./fleet-fixture.ts";

const stop: ActionRequest = {
  agentId: "default",
  runId: 4,
  instanceId: "sim-1",
  kind: "stop",
  decidedBy: "llm",
  idempotencyKey: "run4:stop:sim-1",
  reason: "idle for 2h",
};

describe("executeAction", () => {
  it("calls the provider once per idempotency key and returns the recorded result on a repeat", async () => {
    const { deps, provider } = await fleetFixture();
    const first = await executeAction(deps, stop);
    const again = await executeAction(deps, stop);
    expect(first).toEqual({ actionId: expect.any(Number), status: "succeeded", repeated: false });
    expect(again).toEqual({ actionId: first.actionId, status: "succeeded", repeated: true });
    expect(provider.calls).toEqual(["stop sim-1"]);

    await executeAction(deps, { ...stop, idempotencyKey: "run5:stop:sim-1" });
    expect(provider.calls).toEqual(["stop sim-1", "stop sim-1"]);
  });

  it("repeats a failure as recorded, without calling the provider again", async () => {
    const { deps, provider } = await fleetFixture();
    const first = await executeAction(deps, { ...stop, instanceId: "sim-404" });
    expect(first).toMatchObject({ status: "failed", repeated: false, error: "no such instance: sim-404" });
    const again = await executeAction(deps, { ...stop, instanceId: "sim-404" });
    expect(again).toEqual({ ...first, repeated: true });
    expect(provider.calls).toHaveLength(1);
  });

  it("records who decided, on which run, the key and the provider result, listed newest first", async () => {
    const { deps } = await fleetFixture();
    await executeAction(deps, stop);
    await executeAction(deps, {
      ...stop,
      kind: "label",
      label: "idle",
      decidedBy: "rules",
      runId: 5,
      idempotencyKey: "run5:label",
      reason: undefined,
    });
    const res = await buildApp(() => deps).request("/api/agents/default/actions", { headers: authHeaders() });
    expect(res.status).toBe(200);
    const { actions } = (await res.json()) as { actions: Record<string, unknown>[] };
    expect(actions).toEqual([
      expect.objectContaining({
        kind: "label",
        decidedBy: "rules",
        runId: 5,
        idempotencyKey: "run5:label",
        status: "succeeded",
        result: expect.objectContaining({ label: "idle" }),
      }),
      expect.objectContaining({
        kind: "stop",
        decidedBy: "llm",
        runId: 4,
        instanceId: "sim-1",
        idempotencyKey: "run4:stop:sim-1",
        reason: "idle for 2h",
        status: "succeeded",
        result: { providerCalled: true, provider: "simulator", state: "stopped" },
        error: null,
        finishedAt: new Date(deps.clock.now()).toISOString(),
      }),
    ]);
    expect(await listActions(deps, "default", 1)).toHaveLength(1);
  });

  it("updates the instance and its history, and neither writes an inbox event nor requests a run", async () => {
    const { deps, scheduler, provider } = await fleetFixture();
    await executeAction(deps, stop);
    await executeAction(deps, { ...stop, kind: "label", label: "paused", idempotencyKey: "label-1" });

    const [row] = await deps.db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, "default"), eq(instances.id, "sim-1")));
    expect(row).toMatchObject({ state: "stopped", stateAt: deps.clock.now(), label: "paused" });
    expect((await provider.get("sim-1"))?.state).toBe("stopped");
    const history = await deps.db.select().from(instanceEvents);
    expect(history.map((h) => [h.source, h.fromState, h.toState, h.eventId])).toEqual([
      ["action", "running", "stopped", null],
      ["action", "stopped", "stopped", null],
    ]);
    // Runs never trigger runs.
    expect(await deps.db.select().from(events)).toEqual([]);
    expect(scheduler.published).toEqual([]);
  });

  it("never lets its implied state replace a newer reported one", async () => {
    const { deps } = await fleetFixture();
    await deps.db
      .update(instances)
      .set({ state: "exited", stateAt: deps.clock.now() + 5_000 })
      .where(eq(instances.id, "sim-2"));
    await executeAction(deps, { ...stop, instanceId: "sim-2", kind: "start", idempotencyKey: "start-2" });
    const [row] = await deps.db.select().from(instances).where(eq(instances.id, "sim-2"));
    expect(row!.state).toBe("exited");
  });

  it("fails a label action without a label, without calling the provider", async () => {
    const { deps, provider } = await fleetFixture();
    const result = await executeAction(deps, { ...stop, kind: "label", idempotencyKey: "label-none" });
    expect(result).toMatchObject({ status: "failed", error: "a label action needs a label" });
    expect(provider.calls).toEqual([]);
  });
});

describe("GET /api/agents/:agent/actions", () => {
  it("answers 404 for an unknown agent and 400 for a bad limit", async () => {
    const { deps } = await fleetFixture();
    const app = buildApp(() => deps);
    expect((await app.request("/api/agents/ghost/actions", { headers: authHeaders() })).status).toBe(404);
    const bad = await app.request("/api/agents/default/actions?limit=abc", { headers: authHeaders() });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^invalid query: limit/);
  });
});
