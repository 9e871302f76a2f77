/**
 * The shared scenario of issue #37 item 3, on both hosts: an answer the LLM provider's content
 * filter stopped (`finish_reason: "content_filter"`, content null, as the scripted server sends it
 * after OpenAI's own types) is the run's reply as a note saying so, never an empty reply, and the
 * run's error records it.
 */
import { describe, expect, it } from "vitest";
import { FILTERED_REPLY } from "../../agent/llm/completion-ending.ts";
import { api, finished, idle, lastRunId, settleUntil, type ScenarioHost } from "./driver.ts";

export function defineLlmEndingsScenario(getHost: () => ScenarioHost) {
  describe("LLM endings", () => {
    it("an answer the provider's content filter stopped is said so in the reply and recorded on the run", async () => {
      const host = getHost();
      const before = await lastRunId(host);
      host.llm.push({ text: "", finish: "content_filter" });
      await api(host, "POST", "/api/agents/default/messages", { text: "how is the fleet?" });
      const run = await settleUntil(host, () => finished(host, before + 1));
      expect(run).toMatchObject({ status: "succeeded", decider: "llm", reply: FILTERED_REPLY });
      const listed = (await api(host, "GET", "/api/agents/default/runs?limit=5")).runs as { runId: number; error: string | null }[];
      expect(listed.find((r) => r.runId === before + 1)!.error).toContain("content_filter");
      await settleUntil(host, () => idle(host));
    });
  });
}
