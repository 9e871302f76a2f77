/**
 * The simulation's scheduler: honours dedup keys and notBefore like the real ones, but hands
 * deliveries to the driver, which may deliver them in any order, twice, or later than due.
 * A handler error puts the delivery back (at-least-once), as both real schedulers do.
 */
import type { PublishRequest, Scheduler } from "../../pipeline/index.ts";
import type { FaultSwitch } from "./faulty-client.ts";
import type { Rng } from "./rng.ts";

export interface Queued {
  request: PublishRequest;
  availableAt: number;
}

export class SimScheduler implements Scheduler {
  readonly kind = "test" as const;
  readonly queue: Queued[] = [];
  publishes = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly rng: Rng,
    private readonly faults: FaultSwitch,
  ) {}

  async publish(request: PublishRequest): Promise<void> {
    if (this.faults.on && this.rng.chance(this.faults.rate)) throw new Error("injected scheduler outage");
    this.publishes++;
    if (this.seen.has(request.dedupKey)) return;
    this.seen.add(request.dedupKey);
    this.queue.push({ request, availableAt: request.notBefore });
  }

  due(now: number): Queued[] {
    return this.queue.filter((q) => q.availableAt <= now);
  }

  remove(item: Queued): void {
    const i = this.queue.indexOf(item);
    if (i >= 0) this.queue.splice(i, 1);
  }
}
