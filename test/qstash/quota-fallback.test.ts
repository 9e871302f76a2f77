/**
 * QStash at its daily quota, in process against the strict fake: the event is accepted, the cron
 * invocation performs its run itself, and once the quota resets the messages QStash still held
 * arrive late and change nothing (their slot was superseded and claimed).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ingestEvent, listRuns, MonitoredScheduler, readSchedulerHealth } from "../../pipeline/index.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { deliveryRequest, startFakeQStash, type FakeQStash } from "./fake-qstash.ts";
import { createQStashDeps } from "./qstash-deps.ts";

let fake: FakeQStash;
beforeEach(async () => {
  fake = await startFakeQStash();
});
afterEach(async () => {
  await fake.close();
});

describe("QStash at its daily quota", () => {
  it("the cron invocation runs what QStash refused; after the reset the held messages are stale", async () => {
    const base = await createQStashDeps(fake);
    const deps = {
      ...base,
      scheduler: new MonitoredScheduler(base.scheduler, base),
      config: { ...base.config, debounceStateMs: 3_600_000 },
    };
    fake.now = () => deps.clock.now();
    const app = buildApp(() => deps);

    // Accepted while QStash still takes messages: a state change, its run delivery held for an hour.
    await ingestEvent(deps, {
      agentId: "default",
      source: "webhook",
      priority: 1,
      dedupKey: "w1",
      payload: { instanceId: "i1", state: "exited" },
    });
    expect(fake.messages.map((m) => JSON.parse(m.body))).toEqual([{ type: "run", agentId: "default", slot: 1 }]);

    // The quota runs out; a human's message moves the run forward and its publish is refused.
    fake.quota.limit = fake.quota.usedToday;
    await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "m1", payload: { text: "status?" } });
    expect(fake.requests.at(-1)!.status).toBe(429);
    expect(await readSchedulerHealth(deps)).toMatchObject({ ok: false, error: expect.stringMatching(/daily rate limit/) });

    deps.clock.advance(deps.config.debounceHumanMs);
    const report = await runScheduledTick(deps);
    expect(report).toMatchObject({ schedulerFailing: true, ran: [{ agentId: "default", slot: 2, result: "succeeded" }] });
    const [run] = await listRuns(deps, "default", 5);
    expect(run!.triggers.map((t) => t.source).sort()).toEqual(["human", "webhook"]);

    // The next day: the held run delivery arrives and finds its slot superseded.
    fake.quota.reset();
    deps.clock.advance(3_600_000);
    expect((await runScheduledTick(deps)).ran).toEqual([]);
    expect((await readSchedulerHealth(deps)).ok).toBe(true);
    deps.clock.advance(1000); // Not-Before is whole seconds, rounded up
    const results: string[] = [];
    for (const message of fake.messages.filter((m) => m.state === "pending" && m.nextAttemptAt <= deps.clock.now())) {
      message.state = "delivered";
      results.push((await (await app.request(deliveryRequest(message))).json()).result);
    }
    expect(results).toEqual(["stale", "ticked"]); // the run of slot 1; the probe (a tick)
    expect(await listRuns(deps, "default", 5)).toHaveLength(1);
  });
});
