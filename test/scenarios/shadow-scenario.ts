/**
 * The shared scenario of issue 22's pause switch, on both hosts: POST /api/agents/:agent/mode
 * puts the agent in shadow mode (audited with the operator's name); an instance's failure reported
 * by signed webhook wakes a run whose restart is recorded as `proposed` with its evidence, and so
 * is a stop a human asked for, while the simulated provider is never called. Switched back to
 * `act`, the next failure is acted on. It uses the bulk instances the pages scenario added, which
 * the provider and fleetwarden agree on.
 */
import { describe, expect, it } from "vitest";
import { api, type ScenarioHost } from "./driver.ts";
import { actionsOfRun, providerAgrees, providerFails, providerRow, scriptedRun } from "./provider-side.ts";

const FAILED = "sim-x-0011";
const ASKED = "sim-x-0012";
const NEXT = "sim-x-0013";

export function defineShadowScenario(getHost: () => ScenarioHost) {
  describe("shadow mode and the pause switch", () => {
    it("paused, a reported failure's restart and a human's stop are proposals the provider never sees; resumed, the next failure is acted on", async () => {
      const host = getHost();
      await providerAgrees(host, ["sim-1", "sim-2", "sim-3"]);
      expect(await api(host, "POST", "/api/agents/default/mode", { mode: "shadow" })).toMatchObject({
        agentId: "default",
        mode: "shadow",
        previous: "act",
      });
      const { activity } = await api(host, "GET", "/api/operators");
      expect(activity[0]).toMatchObject({ action: "mode", agentId: "default", subject: "shadow" });
      try {
        const restart = { tools: [{ name: "start_instance", arguments: { instance_id: FAILED, reason: "it exited" } }] };
        const failed = await scriptedRun(host, [restart, { text: "Proposed a restart." }], () => providerFails(host, FAILED));
        const atProvider = await providerRow(host, FAILED);
        const [proposal] = await actionsOfRun(host, failed);
        expect(proposal).toMatchObject({
          kind: "start",
          instanceId: FAILED,
          status: "proposed",
          decidedBy: "llm",
          result: { providerCalled: false, shadow: true },
        });
        expect(proposal!.evidence!.eventIds.length).toBeGreaterThan(0);

        const askedBefore = await providerRow(host, ASKED);
        const stop = { tools: [{ name: "stop_instance", arguments: { instance_id: ASKED, reason: "a human asked" } }] };
        const asked = await scriptedRun(host, [stop, { text: "Proposed." }], () =>
          api(host, "POST", "/api/agents/default/messages", { text: `please stop ${ASKED}` }),
        );
        const [stopProposal] = await actionsOfRun(host, asked);
        expect(stopProposal).toMatchObject({
          kind: "stop",
          instanceId: ASKED,
          status: "proposed",
          result: { providerCalled: false, shadow: true },
        });
        expect(stopProposal!.evidence!.humanMessage!.text).toBe(`please stop ${ASKED}`);

        // Nothing reached the provider: its rows are as the failure and the pages scenario left them.
        expect(await providerRow(host, FAILED)).toEqual({ ...atProvider, state: "exited" });
        expect(await providerRow(host, ASKED)).toEqual({ ...askedBefore, state: "running" });
        for (const a of [...(await actionsOfRun(host, failed)), ...(await actionsOfRun(host, asked))])
          expect(a.result?.providerCalled).toBe(false);
      } finally {
        expect(await api(host, "POST", "/api/agents/default/mode", { mode: "act" })).toMatchObject({ mode: "act", previous: "shadow" });
      }

      // Acting again: the next failure is restarted, and so is the one only proposed before.
      const restartBoth = {
        tools: [
          { name: "start_instance", arguments: { instance_id: NEXT, reason: "it exited" } },
          { name: "start_instance", arguments: { instance_id: FAILED, reason: "still exited" } },
        ],
      };
      const acted = await scriptedRun(host, [restartBoth, { text: "Restarted both." }], () => providerFails(host, NEXT));
      const done = await actionsOfRun(host, acted);
      expect(done.map((a) => [a.instanceId, a.status, a.result?.providerCalled]).sort()).toEqual([
        [FAILED, "succeeded", true],
        [NEXT, "succeeded", true],
      ]);
      for (const id of [FAILED, NEXT]) expect((await providerRow(host, id))?.state).toBe("running");
    });
  });
}
