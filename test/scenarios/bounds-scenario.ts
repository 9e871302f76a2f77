/**
 * The shared scenario of issue 22's run bound on provider actions, on both hosts: a model that
 * stops every instance a human named, all in one response, gets LLM_ACTIONS_PER_RUN (3 by
 * default) of them carried out; the rest are recorded `refused` naming the bound, the provider
 * never hears of them, and a human is told once for the run (once-mark `bound:<run>:actions`).
 * It uses the bulk instances the pages scenario added.
 */
import { describe, expect, it } from "vitest";
import { api, type ScenarioHost } from "./driver.ts";
import { actionsOfRun, providerRow, scriptedRun } from "./provider-side.ts";

/** LLM_ACTIONS_PER_RUN's default: the scenario hosts do not set it. */
const ACTIONS_PER_RUN = 3;
const NAMED = ["sim-x-0001", "sim-x-0002", "sim-x-0003", "sim-x-0004", "sim-x-0005"];

export function defineBoundsScenario(getHost: () => ScenarioHost) {
  describe("the run bound on provider actions", () => {
    it("a model stopping every instance in one response gets three stops; the rest are refused, and a human hears of it once", async () => {
      const host = getHost();
      const stopAll = { tools: NAMED.map((id) => ({ name: "stop_instance", arguments: { instance_id: id, reason: "stop everything" } })) };
      const runId = await scriptedRun(host, [stopAll, { text: "I stopped what I could." }], () =>
        api(host, "POST", "/api/agents/default/messages", { text: `stop ${NAMED.join(", ")}` }),
      );

      const done = await actionsOfRun(host, runId);
      expect(done).toHaveLength(NAMED.length);
      const succeeded = done.filter((a) => a.status === "succeeded");
      const refused = done.filter((a) => a.status === "refused");
      expect(succeeded).toHaveLength(ACTIONS_PER_RUN);
      expect(refused).toHaveLength(NAMED.length - ACTIONS_PER_RUN);
      for (const a of refused) {
        expect(a.error).toMatch(/LLM_ACTIONS_PER_RUN/);
        expect(a.result?.providerCalled ?? false).toBe(false);
      }
      // The provider stopped exactly the ones carried out.
      for (const a of succeeded) expect((await providerRow(host, a.instanceId))?.state).toBe("stopped");
      for (const a of refused) expect((await providerRow(host, a.instanceId))?.state).toBe("running");

      const { notifications } = await api(host, "GET", "/api/agents/default/notifications?limit=50");
      const bound = (notifications as { title: string; runId: number | null }[]).filter(
        (n) => n.title === `Run ${runId} hit its actions bound`,
      );
      expect(bound).toHaveLength(1);
      expect(bound[0]!.runId).toBe(runId);
    });
  });
}
