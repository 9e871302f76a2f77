/**
 * The local scheduler arms one timer for its earliest due delivery instead of polling: a delivery
 * due now goes out at once, one due later at its time (re-armed when an earlier one is published),
 * an idle scheduler does not wake up, and a wall clock stepped backwards delays it by at most one
 * bounded sleep. A real database; the timers and Date are vitest's fake ones, so every bound below
 * is measured on a clock that moves only when the test advances it: the same on a loaded machine.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeClock } from "../support/fake-clock.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { createTestDb } from "../support/test-deps.ts";
import { LocalScheduler, type DeliveryBody } from "../../pipeline/index.ts";
import { systemClock, type Clock } from "../../runtime/clock.ts";

const body = (slot: number): DeliveryBody => ({ type: "run", agentId: "default", slot });
const schedulers: LocalScheduler[] = [];
beforeEach(() => void vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] }));
afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
  vi.useRealTimers();
});
/** Lets `ms` of fake time pass, firing each timer due on the way and the promises it starts. */
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms);

async function started(clock: Clock, maxSleepMs?: number) {
  const scheduler = new LocalScheduler({ db: await createTestDb(), clock, log: silentLogger, visibilityMs: 60_000, maxSleepMs });
  schedulers.push(scheduler);
  const seen: { body: DeliveryBody; at: number }[] = [];
  await scheduler.start(async (b) => void seen.push({ body: b, at: Date.now() }));
  return { scheduler, seen };
}

describe("local scheduler timer", () => {
  it("delivers what is due now at once, and a later one at its due time, not a poll after", async () => {
    const { scheduler, seen } = await started(systemClock);
    const t0 = Date.now();
    await scheduler.publish({ dedupKey: "now", notBefore: t0, body: body(1) });
    await scheduler.publish({ dedupKey: "soon", notBefore: t0 + 300, body: body(2) });
    await sleep(150);
    expect(seen.map((s) => s.body)).toEqual([body(1)]);
    expect(seen[0]!.at - t0).toBeLessThan(100);
    await sleep(300);
    expect(seen.map((s) => s.body)).toEqual([body(1), body(2)]);
    expect(seen[1]!.at - (t0 + 300)).toBeGreaterThanOrEqual(-5);
    expect(seen[1]!.at - (t0 + 300)).toBeLessThan(100);
  });

  it("an earlier publish re-arms the timer armed for a later delivery", async () => {
    const { scheduler, seen } = await started(systemClock);
    const t0 = Date.now();
    await scheduler.publish({ dedupKey: "late", notBefore: t0 + 10_000, body: body(1) });
    await scheduler.publish({ dedupKey: "early", notBefore: t0 + 100, body: body(2) });
    await sleep(250);
    expect(seen.map((s) => s.body)).toEqual([body(2)]);
  });

  it("an idle scheduler does not wake up: no busy loop, no poll", async () => {
    const { scheduler } = await started(systemClock);
    await scheduler.publish({ dedupKey: "far", notBefore: Date.now() + 60_000, body: body(1) });
    const before = scheduler.wakeUps;
    await sleep(600);
    expect(scheduler.wakeUps - before).toBe(0);
  });

  it("a wall clock stepped back costs at most one bounded sleep, and the timer keeps within its bound meanwhile", async () => {
    const clock = new FakeClock(Date.now());
    const { scheduler, seen } = await started(clock, 200);
    await scheduler.publish({ dedupKey: "k", notBefore: clock.now() + 100, body: body(1) });
    clock.advance(-3_600_000); // NTP steps the clock an hour back
    await sleep(500);
    expect(seen).toEqual([]); // not due by this clock
    const wakeUps = scheduler.wakeUps;
    expect(wakeUps).toBeGreaterThanOrEqual(2); // it looked again on its bounded sleep...
    expect(wakeUps).toBeLessThanOrEqual(5); // ...and did not spin
    clock.advance(3_600_000 + 200); // and steps forward again
    await sleep(350);
    expect(seen.map((s) => s.body)).toEqual([body(1)]);
  });
});
