/**
 * Issue 26's run budget, on both hosts: what one run delivery costs in outside calls (on the
 * Worker, its subrequests: database round trips, QStash publishes, LLM calls). A typical incident
 * (three LLM calls, three tools) and the worst case the settings allow (AGENT_MAX_ITERATIONS = 8
 * LLM calls, a tool each time, no final answer) stay well under the free plan's 50 subrequests.
 */
import { describe, expect, it } from "vitest";
import { api, type InvocationCost, type ScenarioHost } from "./driver.ts";
import { scriptedRun } from "./provider-side.ts";

/** The worst case's ceiling: the free plan's 50 less a margin (get_instance alone is 3 of the 5 a tool round costs; see docs/operations.md, "Subrequests"). */
export const WORST_RUN_SUBREQUESTS = 45;
/** AGENT_MAX_ITERATIONS' default: the scenario hosts do not set it. */
const MAX_ITERATIONS = 8;

const total = (c: InvocationCost) => c.db + c.qstash + c.llm;

/** The costliest run delivery among the invocations since `from`. */
function runDelivery(host: ScenarioHost, from: number): InvocationCost {
  const deliveries = host.costs.slice(from).filter((c) => c.label === "delivery run");
  expect(deliveries.length).toBeGreaterThan(0);
  return deliveries.reduce((a, b) => (total(b) > total(a) ? b : a));
}

export function defineRunBudgetScenario(getHost: () => ScenarioHost) {
  describe("a run delivery's outside calls", () => {
    it("a typical incident (three LLM calls, three tools) and the worst case (eight LLM calls, a tool each) stay under 50", async () => {
      const host = getHost();
      const typicalFrom = host.costs.length;
      await scriptedRun(
        host,
        [
          {
            tools: [
              { name: "get_instance", arguments: { instance_id: "sim-1" } },
              { name: "list_instances", arguments: {} },
            ],
          },
          { tools: [{ name: "remember", arguments: { key: "sim-1-note", fact: "sim-1 was checked by the run budget scenario" } }] },
          { text: "sim-1 is running; noted." },
        ],
        () => api(host, "POST", "/api/agents/default/messages", { text: "how is sim-1?" }),
      );
      const typical = runDelivery(host, typicalFrom);
      expect(typical.llm).toBe(3);
      // Leave memory as the later scenarios expect it.
      await api(host, "DELETE", "/api/agents/default/memory/sim-1-note");

      const worstFrom = host.costs.length;
      const look = { tools: [{ name: "get_instance", arguments: { instance_id: "sim-2" } }] };
      const runId = await scriptedRun(
        host,
        Array.from({ length: MAX_ITERATIONS }, () => look),
        () => api(host, "POST", "/api/agents/default/messages", { text: "keep looking at sim-2" }),
      );
      const worst = runDelivery(host, worstFrom);
      expect(worst.llm).toBe(MAX_ITERATIONS);
      const [run] = ((await api(host, "GET", "/api/agents/default/runs?limit=5")).runs as { runId: number; error: string | null }[]).filter(
        (r) => r.runId === runId,
      );
      expect(run!.error).toMatch(/stopped after 8 LLM calls/);

      console.log(`${host.name}: run delivery, typical incident ${JSON.stringify(typical)}, worst case ${JSON.stringify(worst)}`);
      expect(total(worst)).toBeLessThanOrEqual(WORST_RUN_SUBREQUESTS);
      expect(total(typical)).toBeLessThan(total(worst));
    });
  });
}
