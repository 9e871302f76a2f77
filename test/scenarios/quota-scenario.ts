/**
 * The shared scenario of QStash at its daily quota (issue 20), on both hosts: what QStash refuses
 * is still done, a person hears of it once, /healthz says so, and the messages QStash held
 * arrive after the reset and change nothing.
 *
 * The agent gathers state changes for an hour (its debounceStateMs), so the first webhook's run
 * delivery, accepted before the quota ran out, is held by QStash for that hour. At the quota a
 * person's message moves the run to now: that publish is refused (429), and a second webhook is
 * accepted too. The host's scheduled tick performs the run itself; after the quota resets, QStash
 * delivers the held run delivery (its slot superseded and claimed: stale), the probe and the
 * watchdog's all-clear.
 */
import { inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { simulatorInstances } from "../../schema/index.ts";
import { decodeNtfyHeader, startReceiver } from "../notify/receiver.ts";
import { api, finished, idle, instanceWebhook, lastRunId, scheduledTick, settleUntil, type ScenarioHost } from "./driver.ts";

const WATCHDOG_TITLE = "the scheduler (QStash on Workers) refuses publishes";

async function health(host: ScenarioHost) {
  const res = await fetch(`${host.baseUrl}/healthz`);
  return { status: res.status, body: await res.json() };
}

export function defineQuotaScenario(getHost: () => ScenarioHost) {
  describe("QStash at its daily quota", () => {
    it("the webhook is accepted, /healthz names the scheduler, the scheduled tick runs it, a human is told once, and after the reset nothing is done twice", async () => {
      const host = getHost();
      const ntfy = await startReceiver("/alerts", 200, "ntfy");
      const titles = () => ntfy.received.map((r) => decodeNtfyHeader(String(r.headers.title))).filter((t) => t.includes(WATCHDOG_TITLE));
      // The instances report what the provider says, so reconciliation adds no event of its own.
      await host.db
        .update(simulatorInstances)
        .set({ state: "exited", statusMessage: "exit code 1 (quota scenario)" })
        .where(inArray(simulatorInstances.id, ["sim-1", "sim-3"]));
      await api(host, "PATCH", "/api/agents/default", { settings: { debounceStateMs: 3_600_000, channels: { ntfy: ntfy.url } } });
      try {
        const before = await lastRunId(host);
        const llmCalls = host.llm.requests.filter((r) => r.tools).length;

        expect((await instanceWebhook(host, { instanceId: "sim-3", state: "exited" })).status).toBe(202);
        const held = host.qstash.messages.at(-1)!;
        expect(JSON.parse(held.body)).toMatchObject({ type: "run", agentId: "default" });
        expect(held.notBefore).toBeGreaterThan(Date.now() + 3_500_000);

        host.qstash.quota.limit = host.qstash.quota.usedToday;
        const enqueuedAtQuota = host.qstash.messages.length;
        await api(host, "POST", "/api/agents/default/messages", { text: "is sim-3 back?" });
        expect(host.qstash.requests.at(-1)!.status).toBe(429);
        expect((await instanceWebhook(host, { instanceId: "sim-1", state: "exited" })).status).toBe(202);
        const failing = await health(host);
        expect(failing.status).toBe(503);
        expect(failing.body).toMatchObject({
          ok: false,
          scheduler: { kind: "qstash", ok: false, since: expect.any(String), error: expect.stringMatching(/daily rate limit/) },
        });

        // Within two scheduled ticks the run happens, performed by the tick itself.
        host.llm.push({ text: "sim-1 and sim-3 exited; I am watching them." });
        for (let tick = 0; tick < 2 && !(await finished(host, before + 1)); tick++) await scheduledTick(host);
        const run = await finished(host, before + 1);
        expect(run).toMatchObject({ status: "succeeded", reply: "sim-1 and sim-3 exited; I am watching them." });
        expect(run!.triggers.map((t) => t.source).sort()).toEqual(["human", "webhook", "webhook"]);
        await scheduledTick(host);
        expect(titles()).toEqual([`Watchdog: ${WATCHDOG_TITLE}`]); // once, sent straight to ntfy
        expect(host.qstash.messages).toHaveLength(enqueuedAtQuota); // nothing went through QStash meanwhile

        // The quota resets: the probe is taken, and QStash delivers what it held (the hour passes).
        host.qstash.quota.reset();
        await scheduledTick(host);
        expect((await health(host)).body).toMatchObject({ ok: true, scheduler: { kind: "qstash", ok: true } });
        held.nextAttemptAt = 0;
        await settleUntil(host, async () => held.attempts.length > 0 && titles().length === 2 && (await idle(host)));
        expect(held.attempts).toEqual([200]);
        expect(titles()).toEqual([`Watchdog: ${WATCHDOG_TITLE}`, `Watchdog cleared: ${WATCHDOG_TITLE}`]);
        // Nothing twice: one run, one LLM call, every event consumed by it.
        expect(await lastRunId(host)).toBe(before + 1);
        expect(host.llm.requests.filter((r) => r.tools).length).toBe(llmCalls + 1);
      } finally {
        host.qstash.quota.limit = Infinity;
        await api(host, "PATCH", "/api/agents/default", { settings: { debounceStateMs: null, channels: null } });
        await ntfy.close();
      }
    });
  });
}
