/**
 * Issue #25 item 3: the LLM breaker is per agent and model. teamb's model answering 404 three
 * times opens teamb's breaker only: its runs fall back to rules, its health, watchdog and /healthz
 * entry say so, while the default agent's next run is decided by the LLM and its health is clean.
 * A changed model is a different breaker. Real libSQL, the scripted LLM over loopback HTTP.
 */
import { describe, expect, it } from "vitest";
import { desc, eq } from "drizzle-orm";
import { agentFixture, say, scriptedLlm } from "./harness.ts";
import { deliverDue } from "../support/drive.ts";
import { createAgent, ingestEvent, updateAgent } from "../../pipeline/index.ts";
import { runs } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { watchLoop } from "../support/one-check.ts";
import { loadAttention } from "../../jobs/read-models/attention.ts";
import { AGENT_ROW_TTL_MS } from "../../pipeline/index.ts";
import { withAgent } from "../../jobs/with-agent.ts";

let counter = 0;
async function sayTo(deps: TestDeps, agentId: string, text: string) {
  await ingestEvent(deps, { agentId, source: "human", priority: 0, dedupKey: `teamb:${++counter}`, payload: { text } });
  deps.clock.advance(deps.config.debounceStateMs);
  await deliverDue(deps);
  const [row] = await deps.db.select().from(runs).where(eq(runs.agentId, agentId)).orderBy(desc(runs.runId)).limit(1);
  return row!;
}

const agentHealth = async (deps: TestDeps, agentId: string) =>
  (await buildApp(() => deps).request(`/api/agents/${agentId}/health`, { headers: authHeaders() })).json();

async function brokenTeamb() {
  const llm = await scriptedLlm();
  const { deps } = await agentFixture({ llm });
  await createAgent(deps.db, { id: "teamb", settings: { model: "no-such-model" } }, deps.clock.now());
  llm.push(
    { status: 404, message: "model not found" },
    { status: 404, message: "model not found" },
    { status: 404, message: "model not found" },
  );
  for (let i = 0; i < 3; i++) expect(await sayTo(deps, "teamb", `hello ${i}`)).toMatchObject({ decider: "rules" });
  expect(llm.requests.map((r) => r.model)).toEqual(["no-such-model", "no-such-model", "no-such-model"]);
  return { deps, llm };
}

describe("the LLM breaker is per agent and model", () => {
  it("teamb's 404s open teamb's breaker only: its runs go to rules, the default agent's run is the LLM's", async () => {
    const { deps, llm } = await brokenTeamb();
    const skipped = await sayTo(deps, "teamb", "still there?");
    expect(skipped).toMatchObject({ decider: "rules" });
    expect(skipped.error).toMatch(/circuit breaker is open until .*no-such-model/);
    expect(llm.requests).toHaveLength(3); // open: teamb's model is not asked again

    llm.push({ text: "All fine here." });
    expect(await say(deps, "status?")).toMatchObject({ decider: "llm", reply: "All fine here." });
    expect(llm.requests.at(-1)!.model).toBe("scripted-model");
  });

  it("the watchdog, the agent health route, the dashboard strip and /healthz name teamb, not default", async () => {
    const { deps } = await brokenTeamb();
    // The tick runs each agent's watchdog with its scope (its model), as jobs/tick.ts does.
    expect((await watchLoop((await withAgent(deps, "teamb"))!.deps, "teamb")).started).toContain("llm_breaker_open");
    expect((await watchLoop((await withAgent(deps, "default"))!.deps, "default")).started).not.toContain("llm_breaker_open");

    const teamb = await agentHealth(deps, "teamb");
    expect(teamb.conditions.map((c: { kind: string }) => c.kind)).toContain("llm_breaker_open");
    expect(teamb.conditions.find((c: { kind: string }) => c.kind === "llm_breaker_open").detail).toMatch(/no-such-model is open until/);
    expect(teamb.llm).toMatchObject({ model: "no-such-model", failures: 3, breakerOpenUntil: expect.any(String) });
    const fine = await agentHealth(deps, "default");
    expect(fine).toMatchObject({
      ok: true,
      conditions: [],
      llm: { model: "scripted-model", failures: 0, breakerOpenUntil: null, misconfigured: null },
    });

    expect((await loadAttention(deps, "teamb")).llm.breakerOpenUntil).toBeGreaterThan(deps.clock.now());
    expect((await loadAttention(deps, "default")).llm.breakerOpenUntil).toBeNull();

    const health = await (await buildApp(() => deps).request("/healthz")).json();
    expect(health).toMatchObject({ ok: true, llm: "scripted-model" });
    expect(health.llmTrouble).toEqual([
      { agent: "teamb", model: "no-such-model", breakerOpenUntil: expect.any(String), misconfigured: null },
    ]);
  });

  it("a changed model is a different breaker: teamb's working model is asked at once, and the old one is no longer listed", async () => {
    const { deps, llm } = await brokenTeamb();
    await updateAgent(deps.db, "teamb", { settings: { model: "good-model" } });
    deps.clock.advance(AGENT_ROW_TTL_MS); // past the agent row's cache
    llm.push({ text: "Hello from good-model." });
    expect(await sayTo(deps, "teamb", "try again")).toMatchObject({ decider: "llm", reply: "Hello from good-model." });
    expect(llm.requests.at(-1)!.model).toBe("good-model");
    expect((await agentHealth(deps, "teamb")).llm).toMatchObject({ model: "good-model", failures: 0, breakerOpenUntil: null });
    expect((await (await buildApp(() => deps).request("/healthz")).json()).llmTrouble).toEqual([]);
  });

  it("a misconfiguration is kept on the agent that met it: teamb's health and /healthz name it, default's does not", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    await createAgent(deps.db, { id: "teamb", settings: { model: "vllm-model" } }, deps.clock.now());
    llm.autoToolChoice = false; // teamb meets vLLM without --enable-auto-tool-choice
    expect((await sayTo(deps, "teamb", "status?")).error).toMatch(/LLM server is misconfigured/);
    llm.autoToolChoice = true;

    expect((await agentHealth(deps, "teamb")).llm).toMatchObject({
      model: "vllm-model",
      misconfigured: expect.stringMatching(/refused tool_choice/),
    });
    expect((await agentHealth(deps, "default")).llm).toMatchObject({ model: "scripted-model", misconfigured: null });
    const health = await (await buildApp(() => deps).request("/healthz")).json();
    expect(health.llmTrouble).toEqual([
      { agent: "teamb", model: "vllm-model", breakerOpenUntil: null, misconfigured: expect.stringMatching(/refused tool_choice/) },
    ]);
    llm.push({ text: "Fine." });
    expect(await say(deps, "status?")).toMatchObject({ decider: "llm", reply: "Fine." });
  });
});
