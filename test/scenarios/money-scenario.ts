/**
 * Money a renter can trust (issue #33, "Done when"), on both hosts (money-node.test.ts,
 * money-worker.test.ts): the default agent on Vast.ai (the strict fake over loopback,
 * test/fleet/vast-server.ts), the rules policy deciding (no LLM configured), Slack played by the
 * loopback receiver. Three instances, so the Worker's invocations stay far under their 50
 * subrequests:
 * - "1" is offline: the quiet fleet's replacement proposal comes from the tick alone once
 *   REPLACE_AFTER_S (the default, 1800 s) has passed, with no other event and no run;
 * - "2" runs at 0 % GPU: the idle stop, decided without a human, is told once with what it saves;
 * - "3" is an 8×H100 at $23/h: GET /spend 60 s after it was first seen is within 10 % of rate × time.
 * The hosts run in real time, so "time passing" is the host's database rows moved back (the
 * death's and the idle episode's start), as the economics scenario does; the 60 s are real.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, instances } from "../../schema/index.ts";
import { startReceiver, type Receiver } from "../notify/receiver.ts";
import { startVastServer, vastInstance, type VastServer } from "../fleet/vast-server.ts";
import { api, cron, idle, lastRunId, settleUntil, type ScenarioHost } from "./driver.ts";
import type { ScenarioHostOptions } from "./hosts.ts";

const VAST_KEY = "vast-money-scenario-key";
/** fleetwarden's default REPLACE_AFTER_S (runtime/settings/rows-fleet.ts). */
const REPLACE_AFTER_MS = 1800 * 1000;
const IDLE_STOP_AFTER_S = 1800;
const H100_RATE = 23;
const MIN = 60_000;
/** The rentals' contracts end in a month (vast-server.ts's default end_date has passed, which is told of). */
const endDate = () => Math.floor(Date.now() / 1000) + 30 * 24 * 3600;

const slackTexts = (slack: Receiver) => slack.received.map((r) => String((JSON.parse(r.body) as { text?: string }).text ?? ""));

async function tickAndSettle(host: ScenarioHost) {
  await cron(host);
  await settleUntil(host, () => idle(host));
}

/** Moves an instance's row back in time on the host's database, as if `ms` had passed. */
function backdate(host: ScenarioHost, id: string, set: Partial<typeof instances.$inferInsert>) {
  return host.db
    .update(instances)
    .set(set)
    .where(and(eq(instances.agentId, "default"), eq(instances.id, id)));
}

export function defineMoneyScenario(start: (options: ScenarioHostOptions) => Promise<ScenarioHost>, onDone?: (host: ScenarioHost) => void) {
  describe("money a renter can trust (Vast.ai, the rules policy)", () => {
    let host: ScenarioHost;
    let vast: VastServer;
    let slack: Receiver;

    beforeAll(async () => {
      vast = await startVastServer({
        apiKey: VAST_KEY,
        instances: [
          vastInstance(1, {
            actual_status: "offline",
            cur_state: "stopped",
            machine_id: 101,
            dph_total: 0.6,
            label: "trainer",
            end_date: endDate(),
          }),
          vastInstance(2, { gpu_util: 0, dph_total: 2.3, storage_total_cost: 0.2, label: "notebook", end_date: endDate() }),
          vastInstance(3, {
            gpu_name: "H100 SXM",
            num_gpus: 8,
            dph_total: H100_RATE,
            storage_total_cost: 0.5,
            gpu_util: 95,
            label: "pretrain",
          }),
        ],
      });
      slack = await startReceiver("/hook", 200, "slack");
      host = await start({
        llm: false,
        vars: {
          PROVIDER: "vast",
          VAST_API_KEY: VAST_KEY,
          VAST_URL: vast.url,
          SLACK_WEBHOOK_URL: slack.url,
          IDLE_STOP_AFTER_S: String(IDLE_STOP_AFTER_S),
          IDLE_NOTIFY_AFTER_S: "0",
        },
      });
      // Past RECONCILE_INTERVAL_S since a start-up tick, so this one lists the fleet.
      await new Promise((r) => setTimeout(r, 1_100));
      await tickAndSettle(host);
    });

    afterAll(async () => {
      if (host) onDone?.(host);
      await host?.close();
      await vast?.close();
      await slack?.close();
    });

    it("a quiet fleet: the offline instance is proposed for replacement once REPLACE_AFTER_S has passed, by the tick alone", async () => {
      expect(
        (await api(host, "GET", "/api/agents/default/instances")).instances
          .map((i: { id: string; state: string }) => `${i.id}:${i.state}`)
          .sort(),
      ).toEqual(["1:offline", "2:running", "3:running"]);
      const pendingReplace = async () =>
        (
          (await api(host, "GET", "/api/agents/default/approvals?status=pending")).approvals as { kind: string; instanceId: string }[]
        ).filter((a) => a.kind === "replace" && a.instanceId === "1");
      // The first sighting's run found it dead for less than REPLACE_AFTER_S: not yet.
      expect(await pendingReplace()).toEqual([]);

      // Nothing happens for REPLACE_AFTER_S (and a minute more): no event, no message, no run.
      await backdate(host, "1", { stateAt: Date.now() - REPLACE_AFTER_MS - MIN });
      const runsBefore = await lastRunId(host);
      const eventsBefore = (await host.db.select({ id: events.id }).from(events)).length;
      await tickAndSettle(host);

      expect(await pendingReplace()).toHaveLength(1);
      const { replacements } = await api(host, "GET", "/api/agents/default/replacements");
      expect(replacements).toEqual([expect.objectContaining({ oldInstanceId: "1", status: "awaiting_approval", decidedBy: "rules" })]);
      expect(vast.created).toEqual([]);
      expect(await lastRunId(host)).toBe(runsBefore);
      expect((await host.db.select({ id: events.id }).from(events)).length).toBe(eventsBefore);

      // Once per death: another tick files nothing more.
      await tickAndSettle(host);
      expect(await pendingReplace()).toHaveLength(1);
    });

    it("an idle stop with no human is told once, with what it saves per hour", async () => {
      // The instance has worked at 0 % for 31 minutes (past IDLE_STOP_AFTER_S); its telemetry is fresh.
      const [row] = await host.db
        .select()
        .from(instances)
        .where(and(eq(instances.agentId, "default"), eq(instances.id, "2")));
      expect(row).toMatchObject({ gpuUtil: 0, idleSince: expect.any(Number) });
      await backdate(host, "2", { idleSince: Date.now() - 31 * MIN });
      // A tick leaves alone what its own reconciliation changed: allow up to three.
      for (let tick = 0; tick < 3 && vast.instances.get(2)?.intended_status !== "stopped"; tick++) await tickAndSettle(host);
      expect(vast.instances.get(2)?.intended_status).toBe("stopped");
      // The notice reaches Slack through the scheduler's delivery; later ticks tell nothing more.
      await settleUntil(host, async () => slackTexts(slack).some((t) => t.includes("Stopped 2")));
      await tickAndSettle(host);
      await tickAndSettle(host);

      const told = slackTexts(slack).filter((t) => t.includes("Stopped 2"));
      expect(told).toHaveLength(1);
      expect(told[0]).toContain("saves $2.10/h");
      expect(told[0]).toMatch(/gpu_util 0 % for 3\d min, from Vast\.ai/);
    });

    it("spend 60 s after the 8×H100 was first seen is within 10 % of rate × time", async () => {
      // Its start is when fleetwarden first saw it running (the rental's own start_date is long before today).
      const [seen] = await host.db
        .select()
        .from(instances)
        .where(and(eq(instances.agentId, "default"), eq(instances.id, "3")));
      const startedAt = seen!.stateAt;
      const wait = startedAt + MIN - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const askedAt = Date.now();
      const spend = await api(host, "GET", "/api/agents/default/spend");
      const expected = (H100_RATE * (askedAt - startedAt)) / 3_600_000;
      const h100 = (spend.instances as { id: string; usdToday: number }[]).find((i) => i.id === "3");
      expect(h100).toBeDefined();
      expect(Math.abs(h100!.usdToday - expected)).toBeLessThanOrEqual(expected * 0.1);
      expect(spend.today.usd).toBeGreaterThanOrEqual(h100!.usdToday);
      expect(spend.today.burnPerHour).toBeGreaterThanOrEqual(H100_RATE);
    });
  });
}
