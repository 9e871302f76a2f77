/**
 * The shared scenario of issue 23's replacement, on both hosts: a bulk instance whose host has been
 * offline for two hours is proposed for replacement by the model (replace_instance), which files an
 * approval and rents nothing; once a human approves, the next cron tick creates exactly one
 * instance on another machine, the old one is kept while the new one loads, and only when the new one runs does a cron
 * tick destroy the old one and record the lineage on both. Runs last: it destroys its instance.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { instances, simulatorInstances } from "../../schema/index.ts";
import { api, cron, idle, settleUntil, type ScenarioHost } from "./driver.ts";
import { scriptedRun } from "./provider-side.ts";

const OLD = "sim-x-0031";

interface ReplacementView {
  id: number;
  oldInstanceId: string;
  newInstanceId: string | null;
  status: string;
}

async function replacementOf(host: ScenarioHost): Promise<ReplacementView | undefined> {
  const { replacements } = await api(host, "GET", "/api/agents/default/replacements");
  return (replacements as ReplacementView[]).find((r) => r.oldInstanceId === OLD);
}

const simulated = async (host: ScenarioHost) => (await host.db.select().from(simulatorInstances)).length;

export function defineReplacementScenario(getHost: () => ScenarioHost) {
  describe("replacing a dead rental", () => {
    it("proposed by the model and approved by a human: one create, the old one destroyed only once the new one runs, lineage on both", async () => {
      const host = getHost();
      const twoHoursAgo = Date.now() - 2 * 3_600_000;
      // The host is gone for good: the provider and fleetwarden's view agree, for two hours now.
      await host.db
        .update(simulatorInstances)
        .set({ state: "offline", failure: "host_offline", statusMessage: "host offline" })
        .where(eq(simulatorInstances.id, OLD));
      await host.db
        .update(instances)
        .set({ state: "offline", stateAt: twoHoursAgo })
        .where(and(eq(instances.agentId, "default"), eq(instances.id, OLD)));
      const rented = await simulated(host);

      const propose = {
        tools: [{ name: "replace_instance", arguments: { instance_id: OLD, reason: "its host has been offline for two hours" } }],
      };
      await scriptedRun(host, [propose, { text: "Asked a human to approve a replacement." }], () =>
        api(host, "POST", "/api/agents/default/messages", { text: `${OLD} is dead, please replace it` }),
      );
      const { approvals } = await api(host, "GET", "/api/agents/default/approvals?status=pending");
      const asked = (approvals as { id: number; kind: string; instanceId: string }[]).find(
        (a) => a.kind === "replace" && a.instanceId === OLD,
      );
      expect(asked).toBeDefined();
      expect(await simulated(host)).toBe(rented);

      // The decision wakes the agent once and marks the replacement approved; the next cron tick's
      // replacement check (its only stepper) searches offers and rents.
      host.llm.push({ text: "The replacement is under way." });
      await api(host, "POST", `/api/agents/default/approvals/${asked!.id}`, { decision: "approve" });
      await settleUntil(host, () => idle(host));
      expect(await replacementOf(host)).toMatchObject({ status: "approved", newInstanceId: null });
      expect(await simulated(host)).toBe(rented);
      await cron(host);
      await settleUntil(host, () => idle(host));
      const waiting = await replacementOf(host);
      expect(waiting).toMatchObject({ status: "waiting", newInstanceId: expect.any(String) });
      expect(await simulated(host)).toBe(rented + 1);
      const [old] = await host.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, OLD));
      expect(old!.destroyed).toBe(false);

      // The new one boots; a tick sees it running and only then destroys the old one.
      await host.db
        .update(simulatorInstances)
        .set({ startedAt: Date.now() - 1_000 })
        .where(eq(simulatorInstances.id, waiting!.newInstanceId!));
      for (let tick = 0; tick < 3 && (await replacementOf(host))?.status !== "done"; tick++) {
        await cron(host);
        await settleUntil(host, () => idle(host));
      }
      expect(await replacementOf(host)).toMatchObject({ status: "done", newInstanceId: waiting!.newInstanceId });
      const [gone] = await host.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, OLD));
      expect(gone!.destroyed).toBe(true);
      expect(await simulated(host)).toBe(rented + 1);
      const lineage = await host.db.select().from(instances).where(eq(instances.agentId, "default"));
      expect(lineage.find((i) => i.id === waiting!.newInstanceId)?.replaces).toBe(OLD);
      expect(lineage.find((i) => i.id === OLD)?.replacedBy).toBe(waiting!.newInstanceId);
      expect(host.llm.pending).toBe(0);
    });
  });
}
