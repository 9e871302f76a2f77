/**
 * Drives the pipeline in tests: delivers whatever the RecordingScheduler holds that is due at the
 * fake clock's time, through the same handleDelivery the real schedulers call.
 */
import type { Deps } from "../../jobs/deps.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import type { RecordingScheduler } from "./test-deps.ts";
import type { FakeClock } from "./fake-clock.ts";

export async function deliverDue(deps: Deps & { clock: FakeClock }, scheduler = deps.scheduler as RecordingScheduler): Promise<string[]> {
  const results: string[] = [];
  for (let round = 0; round < 100; round++) {
    const due = scheduler.takeDue(deps.clock.now());
    if (due.length === 0) return results;
    for (const request of due) results.push(await handleDelivery(deps, request.body));
  }
  throw new Error("deliveries kept re-publishing themselves");
}

/** Advances the clock by `ms` and delivers what became due. */
export async function advance(deps: Deps & { clock: FakeClock }, ms: number): Promise<string[]> {
  deps.clock.advance(ms);
  return deliverDue(deps);
}

/**
 * Starts the delivery due now without waiting for it to finish: a run that claims is left in
 * flight inside its step (a gated step), so the test can act while it holds the lease.
 */
export async function startDueDelivery(
  deps: Deps & { clock: FakeClock },
  scheduler = deps.scheduler as RecordingScheduler,
): Promise<{ done: Promise<string> }> {
  const [due] = scheduler.takeDue(deps.clock.now());
  if (!due) throw new Error("no delivery is due");
  const done = handleDelivery(deps, due.body);
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { done };
}
