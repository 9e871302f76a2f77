/**
 * Whether the scheduler accepts publishes, kept in the database (schema/scheduler-health.ts) so
 * a refused publish is never silent: QStash at its daily quota (429), rate limited, down (5xx),
 * refusing the token (401) or unreachable. `MonitoredScheduler` wraps the host's scheduler; every
 * publish still succeeds or throws exactly as the inner one does (callers keep their own
 * fallbacks), and on the way it records the state this process last saw: one write when
 * publishing starts failing, one when it works again (and one on a process's first publish), never
 * one per publish. /healthz, the watchdog and the cron invocation read the row.
 */
import { eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { schedulerHealth } from "../schema/index.ts";
import type { PublishRequest, Scheduler } from "./scheduler.ts";

/** How much of a refusal's error is kept. */
const ERROR_CHARS = 500;

export interface SchedulerHealth {
  kind: string;
  ok: boolean;
  /** When publishes started failing; when failing ended (or was first seen working) while ok. */
  since: number | null;
  /** The last refusal, while failing. */
  error: string | null;
  lastSuccessAt: number | null;
}

export type Observed = "ok" | "failing";

export function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.slice(0, ERROR_CHARS);
}

export class MonitoredScheduler implements Scheduler {
  readonly kind: Scheduler["kind"];
  readonly publishMany?: (requests: readonly PublishRequest[]) => Promise<void>;
  /** What this process last recorded; null before its first publish or after a failed write. */
  private recorded: Observed | null = null;

  constructor(
    private readonly inner: Scheduler,
    private readonly deps: Pick<PipelineDeps, "db" | "clock" | "log">,
  ) {
    this.kind = inner.kind;
    const many = inner.publishMany?.bind(inner);
    if (many) this.publishMany = (requests) => this.observe(() => many(requests));
  }

  publish(request: PublishRequest): Promise<void> {
    return this.observe(() => this.inner.publish(request));
  }

  private async observe(publish: () => Promise<void>): Promise<void> {
    try {
      await publish();
    } catch (err) {
      await this.record("failing", err);
      throw err;
    }
    await this.record("ok");
  }

  /** Writes the state when it differs from what this process last wrote. Never throws. */
  private async record(state: Observed, err?: unknown): Promise<void> {
    if (this.recorded === state) return;
    // Set before the write: publishes in flight together write once.
    this.recorded = state;
    if (state === "failing") this.deps.log.error("the scheduler refuses publishes", { kind: this.kind, error: describeError(err) });
    if (!(await writeSchedulerHealth(this.deps, this.kind, state, err))) this.recorded = null;
  }
}

/**
 * Writes a scheduler kind's state: failing (since now unless already failing, with the error) or
 * ok (failing cleared, last success now). False when the write failed (logged, never thrown).
 */
export async function writeSchedulerHealth(
  deps: Pick<PipelineDeps, "db" | "clock" | "log">,
  kind: string,
  state: Observed,
  err?: unknown,
): Promise<boolean> {
  const { db, clock, log } = deps;
  const now = clock.now();
  try {
    if (state === "failing") {
      const error = describeError(err);
      await db
        .insert(schedulerHealth)
        .values({ kind, failingSince: now, lastError: error, lastFailureAt: now })
        .onConflictDoUpdate({
          target: schedulerHealth.kind,
          set: { failingSince: sql`coalesce(${schedulerHealth.failingSince}, ${now})`, lastError: error, lastFailureAt: now },
        });
    } else {
      await db
        .insert(schedulerHealth)
        .values({ kind, lastSuccessAt: now })
        .onConflictDoUpdate({ target: schedulerHealth.kind, set: { failingSince: null, lastSuccessAt: now } });
    }
    return true;
  } catch (writeError) {
    log.error("could not record the scheduler's health", { kind, error: String(writeError) });
    return false;
  }
}

/** The statement reading a scheduler kind's health row (the tick's snapshot includes it). */
export function schedulerHealthRead(deps: Pick<PipelineDeps, "db">, kind: string) {
  return deps.db.select().from(schedulerHealth).where(eq(schedulerHealth.kind, kind));
}

/** The health a row says; no row means nothing has failed yet. */
export function healthFrom(kind: string, row: typeof schedulerHealth.$inferSelect | undefined): SchedulerHealth {
  const failing = row?.failingSince != null;
  return {
    kind,
    ok: !failing,
    since: (failing ? row?.failingSince : row?.lastSuccessAt) ?? null,
    error: failing ? (row?.lastError ?? null) : null,
    lastSuccessAt: row?.lastSuccessAt ?? null,
  };
}

export async function readSchedulerHealth(deps: Pick<PipelineDeps, "db" | "scheduler">): Promise<SchedulerHealth> {
  const [row] = await schedulerHealthRead(deps, deps.scheduler.kind);
  return healthFrom(deps.scheduler.kind, row);
}
