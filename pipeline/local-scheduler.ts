/**
 * The local scheduler (Node host): QStash's contract on a durable table and an in-process timer.
 * publish = insert-or-ignore on the dedup key; the timer claims due rows (hiding them for a
 * visibility timeout while a handler holds them), calls the handler, and marks them delivered or
 * re-schedules them with exponential backoff, giving up after MAX_ATTEMPTS. Rows survive a
 * restart, so whatever fell due while the process was down is delivered when it comes back.
 *
 * No polling: one timer is armed for the earliest pending delivery's due time (re-armed when a
 * publish, a retry or a finished handler brings an earlier one). Its delay comes from the clock
 * but never exceeds `maxSleepMs`, so a wall clock stepped backwards costs at most one such sleep,
 * never a stall; a timer that finds nothing due (a clock stepped back, another process's claim)
 * waits at least IDLE_FLOOR_MS before looking again, so nothing spins.
 */
import { and, asc, eq, isNotNull, lte, min, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/log.ts";
import { deliveries } from "../schema/index.ts";
import type { DeliveryBody, PublishRequest, Scheduler } from "./scheduler.ts";

export const MAX_ATTEMPTS = 8;
const BATCH = 25;
/** The longest the timer sleeps before looking again, whatever the clock says. */
export const MAX_SLEEP_MS = 30_000;
/** The shortest wait after a timer that found nothing due although a row looked due. */
export const IDLE_FLOOR_MS = 50;

export function backoffMs(attempt: number): number {
  return Math.min(1000 * 2 ** (attempt - 1), 5 * 60_000);
}

export interface LocalSchedulerOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** How long a claimed delivery stays hidden before it is offered again (≥ the run lease). */
  visibilityMs: number;
  /** The timer's longest sleep (MAX_SLEEP_MS unless a test asks otherwise). */
  maxSleepMs?: number;
}

export class LocalScheduler implements Scheduler {
  readonly kind = "local" as const;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The clock time the armed timer fires for (null: none armed). */
  private armedFor: number | null = null;
  private running = false;
  /** Timer firings so far (tests check that an idle scheduler does not spin). */
  wakeUps = 0;
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
    if (this.running && (this.armedFor === null || request.notBefore < this.armedFor)) this.armAt(request.notBefore);
  }

  /** Starts delivering. Deliveries a previous process held when it died are offered again now. */
  async start(handler: (body: DeliveryBody) => Promise<unknown>): Promise<void> {
    this.handler = handler;
    const { db, clock } = this.options;
    await db
      .update(deliveries)
      .set({ claimedAt: null, dueAt: clock.now() })
      .where(and(eq(deliveries.status, "pending"), isNotNull(deliveries.claimedAt)));
    this.running = true;
    await this.drain();
    await this.rearm();
  }

  /** Stops the timer and waits for handlers in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
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

  /** Arms the one timer for `dueAt` (now if past), replacing one armed for later. */
  private armAt(dueAt: number, floorMs = 0): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.min(Math.max(dueAt - this.options.clock.now(), floorMs, 0), this.options.maxSleepMs ?? MAX_SLEEP_MS);
    this.armedFor = this.options.clock.now() + delay;
    this.timer = setTimeout(() => void this.fire(), delay);
  }

  private async fire(): Promise<void> {
    this.timer = null;
    this.armedFor = null;
    this.wakeUps++;
    const dispatched = await this.drain();
    await this.rearm(dispatched === 0 ? IDLE_FLOOR_MS : 0);
  }

  /** Arms the timer for the earliest pending delivery (a claimed one's is its visibility timeout). */
  private async rearm(floorMs = 0): Promise<void> {
    if (!this.running) return;
    let next: number | null;
    try {
      const [row] = await this.options.db
        .select({ dueAt: min(deliveries.dueAt) })
        .from(deliveries)
        .where(eq(deliveries.status, "pending"));
      next = row?.dueAt ?? null;
    } catch (err) {
      this.options.log.error("local scheduler could not read deliveries", { error: String(err) });
      next = this.options.clock.now() + 1000;
    }
    const target = next ?? Number.POSITIVE_INFINITY;
    if (this.armedFor !== null && this.armedFor <= target) return;
    this.armAt(Math.min(target, this.options.clock.now() + (this.options.maxSleepMs ?? MAX_SLEEP_MS)), floorMs);
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
      const retryAt = clock.now() + backoffMs(delivery.attempts);
      log.error("delivery failed", { id: delivery.id, attempts: delivery.attempts, giveUp, error: String(err) });
      if (!giveUp && this.running && (this.armedFor === null || retryAt < this.armedFor)) this.armAt(retryAt);
      await db
        .update(deliveries)
        .set({
          status: giveUp ? "failed" : "pending",
          lastError: String(err).slice(0, 1000),
          claimedAt: null,
          dueAt: retryAt,
        })
        .where(eq(deliveries.id, delivery.id))
        .catch((e: unknown) => log.error("could not record a failed delivery", { id: delivery.id, error: String(e) }));
    }
  }
}
