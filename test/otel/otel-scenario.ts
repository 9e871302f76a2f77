/**
 * Traces from a running host (issue 36 item 2), on both hosts (otel-node.test.ts,
 * otel-worker.test.ts): the host is started with OTEL_EXPORTER_OTLP_ENDPOINT pointing at the strict
 * loopback receiver (test/otel/otlp-receiver.ts) and its tracer wired as in production
 * (functions/host/wire-deps.ts). A human asks, the scripted LLM reboots sim-1 on the simulator and
 * answers; the run's trace arrives, one request, with the run, both LLM calls and the action. Then
 * the collector hangs: the next run still succeeds (the Worker keeps the export alive with
 * `waitUntil`, abandoned after its timeout; nothing waits for it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, finished, idle, lastRunId, settleUntil, type ScenarioHost } from "../scenarios/driver.ts";
import type { ScenarioHostOptions } from "../scenarios/hosts.ts";
import { attributesOf, startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.ts";

/** Polls real time for the export of run `runId`, which the host sends after the run; fails after `limitMs`. */
async function exported(collector: OtlpReceiver, runId: number, limitMs = 15_000) {
  const give = Date.now() + limitMs;
  for (;;) {
    const sent = collector.received.find((r) =>
      r.spans.some((s) => s.name === "fleetwarden.run" && attributesOf(s)["fleetwarden.run.id"] === runId),
    );
    if (sent) return sent;
    if (Date.now() > give) throw new Error(`run ${runId} was not exported; refused: ${collector.refused.join("; ")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function defineOtelScenario(start: (options: ScenarioHostOptions) => Promise<ScenarioHost>) {
  describe("traces of a host's runs over OTLP/HTTP", () => {
    let host: ScenarioHost;
    let collector: OtlpReceiver;

    beforeAll(async () => {
      collector = await startOtlpReceiver();
      host = await start({ vars: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: "fleetwarden-scenario" } });
    });
    afterAll(async () => {
      await host?.close();
      await collector?.close();
    });

    it("exports the run, its LLM calls and its provider action once the run finishes", async () => {
      const before = await lastRunId(host);
      host.llm.push(
        { tools: [{ name: "reboot_instance", arguments: { instance_id: "sim-1", reason: "the operator asked" }, id: "call_r" }] },
        { text: "Rebooted sim-1." },
      );
      await api(host, "POST", "/api/agents/default/messages", { text: "please reboot sim-1" });
      const run = await settleUntil(host, () => finished(host, before + 1));
      expect(run).toMatchObject({ status: "succeeded", decider: "llm" });
      await settleUntil(host, () => idle(host));

      const sent = await exported(collector, before + 1);
      expect(collector.refused).toEqual([]);
      expect(sent.serviceName).toBe("fleetwarden-scenario");
      const root = sent.spans.find((s) => s.name === "fleetwarden.run")!;
      expect(attributesOf(root)).toMatchObject({
        "fleetwarden.run.id": before + 1,
        // The run's event sources, as the runs API lists them (a reconcile may have joined the human).
        "fleetwarden.run.triggers": [...new Set(run.triggers.map((t) => t.source))].sort(),
        "fleetwarden.run.status": "succeeded",
        "fleetwarden.run.decider": "llm",
      });
      const children = sent.spans.filter((s) => s !== root);
      expect(children.map((s) => s.name)).toEqual(["chat scripted-model", "fleetwarden.action reboot", "chat scripted-model"]);
      for (const child of children) expect([child.traceId, child.parentSpanId]).toEqual([root.traceId, root.spanId]);
      expect(attributesOf(children[0]!)).toMatchObject({ "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10 });
      expect(attributesOf(children[1]!)).toMatchObject({ "fleetwarden.instance.id": "sim-1", "fleetwarden.action.status": "succeeded" });
      expect(JSON.stringify(sent.spans)).not.toContain("please reboot sim-1");
    });

    it("a collector that never answers does not hold or fail the next run", async () => {
      collector.mode = "hang";
      const before = await lastRunId(host);
      const arrived = collector.arrived;
      host.llm.push({ text: "All fine." });
      await api(host, "POST", "/api/agents/default/messages", { text: "status?" });
      const run = await settleUntil(host, () => finished(host, before + 1));
      expect(run).toMatchObject({ status: "succeeded", decider: "llm" });
      await settleUntil(host, async () => collector.arrived > arrived);
      collector.mode = "ok";
      // The host goes on: the run after it is traced again.
      host.llm.push({ text: "Still fine." });
      await api(host, "POST", "/api/agents/default/messages", { text: "and now?" });
      expect(await settleUntil(host, () => finished(host, before + 2))).toMatchObject({ status: "succeeded" });
      await exported(collector, before + 2);
    });
  });
}
