import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { createWake } from "../../pipeline/index.ts";
import { getAgentState, listRuns } from "../../pipeline/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";
import { advance, startDueDelivery } from "../support/drive.ts";
import { GatedStep } from "../support/gated-step.ts";

const trigger = (n: number) => ({ agentId: "default", source: "manual" as const, priority: 0 as const, dedupKey: `t${n}`, payload: {} });

describe("session reset", () => {
  it("starts a new epoch and changes nothing else; a trigger right after runs with a higher id", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    for (let i = 1; i <= 3; i++) {
      await ingestEvent(deps, trigger(i));
      await advance(deps, 2000);
    }
    await createWake(deps, "default", { dueAt: deps.clock.now() + 3_600_000, reason: "hourly", createdByRun: 3 });
    const before = await getAgentState(deps, "default");

    const res = await app.request("/api/agents/default/session/reset", { method: "POST", headers: authHeaders() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ sessionEpoch: 2, runCounter: 3 });
    const after = await getAgentState(deps, "default");
    expect(after).toEqual({ ...before, sessionEpoch: 2 });

    await ingestEvent(deps, trigger(4));
    expect(await advance(deps, 2000)).toEqual(["succeeded"]);
    const [latest] = await listRuns(deps, "default", 1);
    expect(latest).toMatchObject({ runId: 4, sessionEpoch: 2, status: "succeeded" });
  });

  it("is safe during a run: the run finishes in the epoch it started in, and the counter never goes back", async () => {
    const gated = new GatedStep();
    const deps = await createTestDeps({ runStep: gated.step });
    await ingestEvent(deps, trigger(1));
    deps.clock.advance(2000);
    const running = (await startDueDelivery(deps)).done;
    const app = buildApp(() => deps);
    const reset = await (await app.request("/api/agents/default/session/reset", { method: "POST", headers: authHeaders() })).json();
    expect(reset).toEqual({ sessionEpoch: 2, runCounter: 1 });
    expect((await getAgentState(deps, "default"))!.running).toBe(true);
    gated.open();
    expect(await running).toBe("succeeded");
    const [run] = await listRuns(deps, "default", 1);
    expect(run).toMatchObject({ runId: 1, sessionEpoch: 1, status: "succeeded" });
    expect((await getAgentState(deps, "default"))!.running).toBe(false);
  });
});
