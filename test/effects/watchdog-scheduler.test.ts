/**
 * The watchdog's `scheduler_failing`: while the scheduler refuses publishes the cron invocation's
 * tick raises it and tells a human once, straight to the channel (its own delivery cannot go
 * through the scheduler that refuses); it is listed by /health; once publishes work again it
 * clears and says so once, through the scheduler again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ingestEvent, MonitoredScheduler } from "../../pipeline/index.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { authHeaders, createTestDeps, FlakyScheduler } from "../support/test-deps.ts";
import { deliverDue } from "../support/drive.ts";
import { decodeNtfyHeader, startReceiver, type Receiver } from "../notify/receiver.ts";

const receivers: Receiver[] = [];
afterEach(async () => void (await Promise.all(receivers.splice(0).map((r) => r.close()))));

describe("watchdog: the scheduler refuses publishes", () => {
  it("told once, directly to the channel, while it lasts; cleared once when publishes work again", async () => {
    const ntfy = await startReceiver("/alerts", 200, "ntfy");
    receivers.push(ntfy);
    const flaky = new FlakyScheduler();
    const base = await createTestDeps({ scheduler: flaky, vars: { NTFY_URL: ntfy.url, SIMULATOR_INSTANCES: "0" } });
    const deps = { ...base, scheduler: new MonitoredScheduler(flaky, base) };
    const titles = () => ntfy.received.map((r) => decodeNtfyHeader(String(r.headers.title)));
    const health = async () => (await buildApp(() => deps).request("/api/agents/default/health", { headers: authHeaders() })).json();

    await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "m1", payload: { text: "hi" } }); // its publish is refused
    for (let minute = 0; minute < 3; minute++) {
      deps.clock.advance(60_000);
      expect((await runScheduledTick(deps)).schedulerFailing).toBe(true);
    }
    expect(titles()).toEqual(["Watchdog: the scheduler (QStash on Workers) refuses publishes"]);
    expect(ntfy.received[0]!.body).toMatch(/the test scheduler has refused publishes since .*scheduler unreachable/);
    expect((await health()).conditions).toEqual([expect.objectContaining({ kind: "scheduler_failing" })]);

    flaky.down = false;
    deps.clock.advance(60_000);
    await runScheduledTick(deps); // the probe is taken: the same invocation's tick sees it cleared
    await deliverDue(deps, flaky);
    expect(titles()).toEqual([
      "Watchdog: the scheduler (QStash on Workers) refuses publishes",
      "Watchdog cleared: the scheduler (QStash on Workers) refuses publishes",
    ]);
    expect(await health()).toEqual({ ok: true, conditions: [], llm: null });
  });
});
