/**
 * The pause switch end to end on the Node host (real HTTP, the fake QStash, the scripted LLM, the
 * simulated fleet): with the agent switched to shadow mode by POST /api/agents/:agent/mode, the
 * model's stop of sim-1 is recorded as a proposal with its evidence and the fleet is untouched;
 * switched back, the same request acts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeScenarioHost } from "./hosts.ts";
import { api, cron, finished, idle, lastRunId, settleUntil, type ScenarioHost } from "./driver.ts";

describe("shadow mode on the Node host", { timeout: 90_000 }, () => {
  let host: ScenarioHost;
  beforeAll(async () => {
    host = await startNodeScenarioHost();
    await cron(host);
    await settleUntil(host, () => idle(host));
  });
  afterAll(async () => {
    await host?.close();
  });

  const sim1 = async () => ((await api(host, "GET", "/api/agents/default/instances")).instances as { id: string; state: string }[]).find((i) => i.id === "sim-1");
  async function askToStop() {
    const before = await lastRunId(host);
    host.llm.push({ tools: [{ name: "stop_instance", arguments: { instance_id: "sim-1", reason: "a human asked" } }] }, { text: "Done." });
    await api(host, "POST", "/api/agents/default/messages", { text: "please stop sim-1" });
    await settleUntil(host, () => finished(host, before + 1));
    await settleUntil(host, () => idle(host));
    return (await api(host, "GET", "/api/agents/default/actions?limit=1")).actions[0];
  }

  it("records the model's stop as a proposal while paused, and acts once resumed", async () => {
    expect((await sim1())?.state).toBe("running");
    expect(await api(host, "POST", "/api/agents/default/mode", { mode: "shadow" })).toMatchObject({ mode: "shadow", previous: "act" });
    const proposed = await askToStop();
    expect(proposed).toMatchObject({ kind: "stop", instanceId: "sim-1", status: "proposed", decidedBy: "llm", result: { providerCalled: false, shadow: true } });
    expect(proposed.evidence.humanMessage.text).toBe("please stop sim-1");
    expect((await sim1())?.state).toBe("running");

    await api(host, "POST", "/api/agents/default/mode", { mode: "act" });
    expect(await askToStop()).toMatchObject({ kind: "stop", instanceId: "sim-1", status: "succeeded" });
    expect((await sim1())?.state).toBe("stopped");
  });
});
