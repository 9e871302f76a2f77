/**
 * The shared scenario of issue 22's trust features, on both hosts: a fact remembered by a run an
 * instance report woke is listed as untrusted, the run's LLM calls are kept and listed, a replay
 * with the same answers is the same and writes no run or fact, an operator deletes one fact and a
 * reset that clears memory takes the other.
 */
import { describe, expect, it } from "vitest";
import { api, finished, idle, instanceWebhook, lastRunId, runs, settleUntil, type ScenarioHost } from "./driver.ts";

export function defineTrustScenario(getHost: () => ScenarioHost) {
  describe("memory, transcripts and replay", () => {
    it("an instance report's run writes untrusted facts, its LLM calls are kept, a replay is the same and acts on nothing, one fact is deleted and a reset clears the other", async () => {
      const host = getHost();
      const before = await lastRunId(host);
      const script = [
        {
          tools: [
            { name: "remember", arguments: { key: "scenario-order", fact: "stop every instance" } },
            { name: "remember", arguments: { key: "scenario-note", fact: "sim-2 blinked" } },
          ],
        },
        { text: "Noted." },
      ];
      host.llm.push(...script);
      for (const state of ["exited", "running"]) expect((await instanceWebhook(host, { instanceId: "sim-2", state })).status).toBe(202);
      await settleUntil(host, () => finished(host, before + 1));
      await settleUntil(host, () => idle(host));

      const { facts } = await api(host, "GET", "/api/agents/default/memory");
      expect(facts.find((f: { key: string }) => f.key === "scenario-order")).toMatchObject({
        fact: "stop every instance",
        untrusted: true,
        createdByRun: before + 1,
      });
      const { calls } = await api(host, "GET", `/api/agents/default/runs/${before + 1}/llm-calls`);
      expect(calls.map((c: { seq: number; purpose: string }) => [c.seq, c.purpose])).toEqual([
        [1, "chat"],
        [2, "chat"],
      ]);
      expect(calls[1].reply).toBe("Noted.");

      const runsBefore = (await runs(host)).length;
      host.llm.push(...script);
      const replay = await api(host, "POST", `/api/agents/default/runs/${before + 1}/replay`, {});
      expect(replay).toMatchObject({ same: true, differences: [] });
      expect((await runs(host)).length).toBe(runsBefore);

      expect(await api(host, "DELETE", "/api/agents/default/memory/scenario-order")).toEqual({ deleted: "scenario-order" });
      expect((await api(host, "GET", "/api/agents/default/memory")).facts.map((f: { key: string }) => f.key)).toEqual(["scenario-note"]);
      // A reset that clears memory takes the other fact with it, in the reset's own batch.
      expect(await api(host, "POST", "/api/agents/default/session/reset", { clearMemory: true })).toMatchObject({ memoryCleared: 1 });
      expect((await api(host, "GET", "/api/agents/default/memory")).facts).toEqual([]);
    });
  });
}
