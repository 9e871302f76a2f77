/**
 * The dashboard's view of the agent's decisions: the overview's one-click pause (shadow mode) and
 * resume, audited with the operator's name; proposals shown as "would have restarted sim-1"; and
 * on the run page and the instance page, each action's evidence and who decided it.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { executeAction } from "../../fleet/actions/actions.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { operatorActivity, runs } from "../../schema/index.ts";
import { fleetFixture } from "../actions/fleet-fixture.ts";
import { dashboardClient } from "./dashboard-client.ts";

describe("decisions on the dashboard", () => {
  it("pauses and resumes from the overview, shows proposals, and shows evidence and decider on the run and instance pages", async () => {
    const { deps, provider } = await fleetFixture();
    const client = await dashboardClient(deps);
    const overview = await client.page("/");
    expect(overview.html).toContain('data-mode="act"');
    expect(overview.html).toContain("Pause: shadow mode");

    const paused = await client.post("/mode", { mode: "shadow" });
    expect(paused.status).toBe(303);
    expect(paused.headers.get("location")).toMatch(/done=mode-shadow/);
    const [switched] = await deps.db.select().from(operatorActivity).where(eq(operatorActivity.action, "mode"));
    expect(switched).toMatchObject({ operatorName: "admin", agentId: "default", subject: "shadow" });

    // The agent's next decision, through its scope, is a proposal.
    const scope = (await withAgent(deps, "default"))!;
    await deps.db.insert(runs).values({
      agentId: "default",
      runId: 1,
      status: "succeeded",
      sessionEpoch: 1,
      startedAt: deps.clock.now(),
      finishedAt: deps.clock.now(),
    });
    const result = await executeAction(scope.deps, {
      agentId: "default",
      runId: 1,
      instanceId: "sim-1",
      kind: "reboot",
      decidedBy: "llm",
      model: "model-x",
      idempotencyKey: "k1",
      reason: "it stopped answering",
      evidence: { eventIds: [5], wakeIds: [], humanMessage: { eventId: 6, text: "sim-1 looks stuck" } },
    });
    expect(result.status).toBe("proposed");
    expect(provider.calls).toEqual([]);

    const shadow = (await client.page("/")).html;
    expect(shadow).toContain('data-mode="shadow"');
    expect(shadow).toContain("Resume acting");
    expect(shadow).toContain("would have restarted sim-1");

    const evidence = "Evidence: events #5; human message #6: &quot;sim-1 looks stuck&quot;";
    const runPage = (await client.page("/runs/1")).html;
    expect(runPage).toContain("Actions it decided");
    expect(runPage).toContain("decided by model-x");
    expect(runPage).toContain(evidence);
    const instancePage = (await client.page("/fleet/sim-1")).html;
    expect(instancePage).toContain("decided by model-x");
    expect(instancePage).toContain(evidence);

    expect((await client.post("/mode", { mode: "act" })).status).toBe(303);
    expect((await client.page("/")).html).toContain('data-mode="act"');
    expect((await client.post("/mode", { mode: "off" })).status).toBe(400);
    expect(await deps.db.select().from(operatorActivity).where(eq(operatorActivity.action, "mode"))).toHaveLength(2);
  });
});
