/**
 * The local scheduler (Node host): QStash's contract on a durable table and an in-process timer.
 * publish = insert-or-ignore on the dedup key; the timer claims due rows (hiding them for a
 * visibility timeout while a handler holds them), calls the handler, and marks them delivered or
 * re-schedules them with exponential backoff, giving up after MAX_ATTEMPTS. Rows survive a
 * restart, so whatever fell due while the process was down is delivered when it comes back.
 */
import { and, asc, eq, isNotNull, lte, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/log.ts";
import { deliveries } from "../schema/index.ts";
import type { DeliveryBody, PublishRequest, Scheduler } from "./scheduler.ts";

export const MAX_ATTEMPTS = 8;
const BATCH = 25;

export function backoffMs(attempt: number): number {
  return Math.min(1000 * 2 ** (attempt - 1), 5 * 60_000);
}

export interface LocalSchedulerOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** How long a claimed delivery stays hidden before it is offered again (≥ the run lease). */
  visibilityMs: number;
  pollMs?: number;
}

export class LocalScheduler implements Scheduler {
  readonly kind = "local" as const;
  private timer: ReturnType<typeof setInterval> | null = null;
  private handler: ((body: DeliveryBody) => Promise<unknown>) | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private draining: Promise<number> | null = null;

  constructor(private readonly options: LocalSchedulerOptions) {}

  async publish(request: PublishRequest): Promise<void> {
    const { db, clock } = this.options;
    await db
      .insert(deliveries)
      .values({ dedupKey: request.dedupKey, body: request.body, dueAt: request.notBefore, createdAt: clock.now() })
      .onConflictDoNothing();
    if (this.timer && request.notBefore <= clock.now()) queueMicrotask(() => void this.drain());
  }

  /** Starts delivering. Deliveries a previous process held when it died are offered again now. */
  async start(handler: (body: DeliveryBody) => Promise<unknown>): Promise<void> {
    this.handler = handler;
    const { db, clock } = this.options;
    await db
      .update(deliveries)
      .set({ claimedAt: null, dueAt: clock.now() })
      .where(and(eq(deliveries.status, "pending"), isNotNull(deliveries.claimedAt)));
    this.timer = setInterval(() => void this.drain(), this.options.pollMs ?? 250);
    await this.drain();
  }

  /** Stops the timer and waits for handlers in flight. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.draining;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Claims and dispatches every due delivery; returns how many it dispatched. */
  drain(): Promise<number> {
    if (!this.draining) this.draining = this.claimAndDispatch().finally(() => (this.draining = null));
    return this.draining;
  }

  /** Waits until no delivery is due or in flight (tests). */
  async settle(): Promise<void> {
    while ((await this.drain()) > 0 || this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async claimAndDispatch(): Promise<number> {
    const { db, clock, log, visibilityMs } = this.options;
    if (!this.handler) return 0;
    const now = clock.now();
    let claimed: { id: number; body: unknown; attempts: number }[];
    try {
      const due = db
        .select({ id: deliveries.id })
        .from(deliveries)
        .where(and(eq(deliveries.status, "pending"), lte(deliveries.dueAt, now)))
        .orderBy(asc(deliveries.dueAt))
        .limit(BATCH);
      claimed = await db
        .update(deliveries)
        .set({ attempts: sql`${deliveries.attempts} + 1`, claimedAt: now, dueAt: now + visibilityMs })
        .where(and(sql`${deliveries.id} in ${due}`, eq(deliveries.status, "pending"), lte(deliveries.dueAt, now)))
        .returning({ id: deliveries.id, body: deliveries.body, attempts: deliveries.attempts });
    } catch (err) {
      log.error("local scheduler could not read deliveries", { error: String(err) });
      return 0;
    }
    for (const delivery of claimed) {
      const done = this.dispatch(delivery).finally(() => this.inFlight.delete(done));
      this.inFlight.add(done);
    }
    return claimed.length;
  }

  private async dispatch(delivery: { id: number; body: unknown; attempts: number }): Promise<void> {
    const { db, clock, log } = this.options;
    try {
      await this.handler!(delivery.body as DeliveryBody);
      await db
        .update(deliveries)
        .set({ status: "delivered", deliveredAt: clock.now(), claimedAt: null })
        .where(eq(deliveries.id, delivery.id));
    } catch (err) {
      const giveUp = delivery.attempts >= MAX_ATTEMPTS;
      log.error("delivery failed", { id: delivery.id, attempts: delivery.attempts, giveUp, error: String(err) });
      await db
        .update(deliveries)
        .set({
          status: giveUp ? "failed" : "pending",
          lastError: String(err).slice(0, 1000),
          claimedAt: null,
          dueAt: clock.now() + backoffMs(delivery.attempts),
        })
        .where(eq(deliveries.id, delivery.id))
        .catch((e: unknown) => log.error("could not record a failed delivery", { id: delivery.id, error: String(e) }));
    }
  }
}
