/**
 * A replay has no effect on the pipeline: it requests no run (the agent row's scheduled run and
 * slot stay as they were), publishes no delivery, stores no event, and after every debounce window
 * has passed no run follows it. replay.test.ts counts the tables a run writes; these are the
 * writes a *request* for a run makes, which that count cannot see.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { agents, events, runs } from "../../schema/index.ts";
import { authHeaders, type RecordingScheduler, type TestDeps } from "../support/test-deps.ts";
import { deliverDue } from "../support/drive.ts";
import { agentFixture, say, scriptedLlm, setInstanceState } from "../agent/harness.ts";

async function pipelineState(deps: TestDeps) {
  const [agent] = await deps.db
    .select({ nextRunAt: agents.nextRunAt, runSlot: agents.runSlot, runCounter: agents.runCounter })
    .from(agents)
    .where(eq(agents.id, "default"));
  return {
    agent,
    events: await deps.db.$count(events),
    runs: await deps.db.$count(runs),
    published: (deps.scheduler as RecordingScheduler).published.length,
  };
}

describe("a replay requests no run", () => {
  it("moves no scheduled run, publishes no delivery, stores no event, and no run follows it", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    await setInstanceState(deps, "sim-2", "exited");
    llm.push(
      { tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-2", reason: "it exited" } }] },
      { text: "rebooted sim-2" },
    );
    const run = await say(deps, "what is wrong with sim-2?");
    const before = await pipelineState(deps);

    // Another model, answering with calls that would each request a run if they were executed.
    llm.push(
      {
        tools: [
          { name: "schedule_next_check", arguments: { in_seconds: 60, reason: "look again" } },
          { name: "notify_human", arguments: { title: "x", body: "y" } },
        ],
      },
      { text: "I will look again in a minute." },
    );
    const res = await buildApp(() => deps).request(`/api/agents/default/runs/${run.runId}/replay`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: "other-model" }),
    });
    expect(res.status).toBe(200);
    expect(await pipelineState(deps)).toEqual(before);

    deps.clock.advance(deps.config.debounceStateMs + deps.config.debounceHumanMs + 120_000);
    expect(await deliverDue(deps)).toEqual([]);
    expect(await deps.db.$count(runs)).toBe(before.runs);
  });
});
