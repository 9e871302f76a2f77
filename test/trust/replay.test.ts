/**
 * Replay: a recorded run's first request sent to a model again (the scripted server, real HTTP),
 * the tool loop played without side effects. Same answers → same; another model answering
 * otherwise → the differences. Nothing is written but the replay's own row: no provider call,
 * action, notification, wake, memory, run or LLM call record.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { actions, approvals, llmCalls, memory, notifications, operatorActivity, replays, runs, wakes } from "../../schema/index.ts";
import { NOT_EXECUTED } from "../../agent/llm/replay.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { CountingProvider } from "../actions/counting-provider.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { agentFixture, say, scriptedLlm, seedHistory, setInstanceState } from "../agent/harness.ts";
import type { ScriptedLlm } from "../support/scripted-llm.ts";

const THE_RUN = [
  { tools: [{ name: "get_instance", arguments: { instance_id: "sim-2" } }] },
  { tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-2", reason: "it exited" } }] },
  { text: "sim-2 had exited; I rebooted it." },
];

async function recordedRun() {
  const llm = await scriptedLlm();
  const { deps } = await agentFixture({ llm });
  const provider = new CountingProvider(deps.db, deps.clock);
  deps.provider = provider;
  await setInstanceState(deps, "sim-2", "exited");
  llm.push(...THE_RUN);
  const run = await say(deps, "what is wrong with sim-2?");
  expect(provider.calls).toEqual(["reboot sim-2"]);
  return { llm, deps, provider, run };
}

const WRITTEN_BY_RUNS = { actions, approvals, notifications, wakes, memory, runs, llmCalls, operatorActivity };

/** Rows in every table a run (or its effects) writes, and the activity log. */
async function counts(deps: TestDeps) {
  const entries = await Promise.all(
    Object.entries(WRITTEN_BY_RUNS).map(async ([name, table]) => [name, await deps.db.$count(table)] as const),
  );
  return Object.fromEntries(entries);
}

function replay(deps: TestDeps, runId: number, body: unknown = {}) {
  return buildApp(() => deps).request(`/api/agents/default/runs/${runId}/replay`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify(body),
  });
}

/** The tool results a request carried back to the model (the last request carries them all). */
const toolResultsOf = (request: ScriptedLlm["requests"][number]) => request.messages.filter((m) => m.role === "tool").map((m) => m.content);

describe("replay of a recorded run", () => {
  it("the same answers give the same result; recorded tool results are played back and nothing is executed or written but the replay", async () => {
    const { llm, deps, provider, run } = await recordedRun();
    const before = await counts(deps);
    const sentBefore = llm.requests.length;
    llm.push(...THE_RUN);

    const res = await replay(deps, run.runId);
    expect(res.status).toBe(200);
    const result = await res.json();
    expect(result).toMatchObject({ model: "scripted-model", same: true, differences: [] });
    expect(result.original).toEqual({
      toolCalls: [
        { name: "get_instance", arguments: '{"instance_id":"sim-2"}' },
        { name: "reboot_instance", arguments: '{"instance_id":"sim-2","reason":"it exited"}' },
      ],
      reply: "sim-2 had exited; I rebooted it.",
    });
    expect(result.replay).toEqual(result.original);
    // The replay started from the run's first request, and got the run's own tool results back.
    expect(llm.requests[sentBefore]!.messages).toEqual(llm.requests[0]!.messages);
    expect(llm.requests).toHaveLength(sentBefore + 3);
    expect(toolResultsOf(llm.requests.at(-1)!)).toEqual(toolResultsOf(llm.requests[sentBefore - 1]!));
    expect(toolResultsOf(llm.requests.at(-1)!).join()).not.toContain(NOT_EXECUTED);

    expect(provider.calls).toEqual(["reboot sim-2"]); // the run's reboot only, none from the replay
    expect(await counts(deps)).toEqual(before);
    const rows = await deps.db.select().from(replays);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ runId: run.runId, model: "scripted-model", operator: "admin" });
  });

  it("another model answering otherwise: same false, the differences named, and a call the run never made is not executed", async () => {
    const { llm, deps, provider, run } = await recordedRun();
    const before = await counts(deps);
    const sentBefore = llm.requests.length;
    llm.push(
      { tools: [{ name: "get_instance", arguments: { instance_id: "sim-2" } }] },
      {
        tools: [
          { name: "destroy_instance", arguments: { instance_id: "sim-2", reason: "hostile" } },
          { name: "notify_human", arguments: { title: "x", body: "y" } },
        ],
      },
      { text: "I destroyed sim-2." },
    );

    const result = await (await replay(deps, run.runId, { model: "other-model" })).json();
    expect(llm.requests.slice(sentBefore).map((r) => r.model)).toEqual(["other-model", "other-model", "other-model"]);
    expect(result).toMatchObject({ model: "other-model", same: false });
    expect(result.replay.toolCalls.map((c: { name: string }) => c.name)).toEqual(["get_instance", "destroy_instance", "notify_human"]);
    expect(result.differences).toEqual([
      'tool call 2: the run made reboot_instance {"instance_id":"sim-2","reason":"it exited"}, the replay destroy_instance {"instance_id":"sim-2","reason":"hostile"}',
      'tool call 3: the run made nothing, the replay notify_human {"body":"y","title":"x"}',
      'reply: the run answered "sim-2 had exited; I rebooted it.", the replay "I destroyed sim-2."',
    ]);
    const results = toolResultsOf(llm.requests.at(-1)!);
    expect(results[0]).toBe(toolResultsOf(llm.requests[sentBefore - 1]!)[0]); // get_instance: as the run got it
    expect(results.slice(1)).toEqual([JSON.stringify({ error: NOT_EXECUTED }), JSON.stringify({ error: NOT_EXECUTED })]);
    expect(provider.calls).toEqual(["reboot sim-2"]);
    expect(await counts(deps)).toEqual(before);
  });

  it("a call that matches one of an earlier run (in the history the request carried) is not the run's: not executed", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    await seedHistory(deps, 1_000, { withToolPairs: true }); // earlier runs rebooted sim-1 "slow"
    llm.push({ text: "all fine" });
    const run = await say(deps, "status?");
    const sentBefore = llm.requests.length;
    expect(JSON.stringify(llm.requests[0]!.messages)).toContain("reboot_instance");
    llm.push({ tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-1", reason: "slow" } }] }, { text: "rebooted" });
    await replay(deps, run.runId);
    expect(toolResultsOf(llm.requests.at(-1)!).at(-1)).toBe(JSON.stringify({ error: NOT_EXECUTED }));
    expect(llm.requests.length - sentBefore).toBe(2);
  });

  it("answers 404 for an unknown run, 409 for a model the LLM cannot switch to or a run without recorded calls, 400 for a bad body, 503 without an LLM; none writes a replay", async () => {
    const { deps, run } = await recordedRun();
    expect((await replay(deps, 99)).status).toBe(404);
    const bad = await replay(deps, run.runId, { model: "" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/model/);
    const switchable = deps.llm!;
    deps.llm = { model: switchable.model, complete: (request) => switchable.complete(request) }; // serves one model only
    const fixed = await replay(deps, run.runId, { model: "other-model" });
    expect(fixed.status).toBe(409);
    expect((await fixed.json()).error).toBe("the configured LLM serves only scripted-model; it cannot replay against other-model");
    await deps.db.delete(llmCalls);
    const none = await replay(deps, run.runId);
    expect(none.status).toBe(409);
    expect((await none.json()).error).toMatch(/^run 1 has no recorded LLM calls/);
    deps.llm = null;
    const noLlm = await replay(deps, run.runId);
    expect(noLlm.status).toBe(503);
    expect((await noLlm.json()).error).toMatch(/no LLM is configured/);
    expect(await deps.db.select().from(replays)).toHaveLength(0);
  });

  it("the run page's Replay with… form replays and shows the last result", async () => {
    const { llm, deps, run } = await recordedRun();
    llm.push({ text: "all fine, nothing to do" });
    const client = await dashboardClient(deps);
    expect((await client.page(`/runs/${run.runId}`)).html).toContain(`action="/runs/${run.runId}/replay`);
    const res = await client.post(`/runs/${run.runId}/replay`, { model: "other-model" });
    expect(res.status).toBe(303);
    const page = await client.page(`/runs/${run.runId}?done=replayed`);
    expect(page.html).toContain("Last replay: other-model, by admin");
    expect(page.html).toContain('<span class="badge warn">different</span>');
    expect(page.html).toContain("all fine, nothing to do");
  });

  it("is bounded by AGENT_MAX_ITERATIONS: a model that keeps calling tools gets that many calls and no more", async () => {
    const { llm, deps, run } = await recordedRun();
    const sentBefore = llm.requests.length;
    const max = deps.config.agentMaxIterations;
    for (let i = 0; i < max + 3; i++) llm.push({ tools: [{ name: "list_instances", arguments: {} }] });
    const result = await (await replay(deps, run.runId)).json();
    expect(llm.requests.length - sentBefore).toBe(max);
    expect(result.replay).toMatchObject({ reply: null });
    expect(result.replay.toolCalls).toHaveLength(max);
    expect(result.same).toBe(false);
  });
});
