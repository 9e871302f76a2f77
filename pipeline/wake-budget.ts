/**
 * Budgeted self-wakes (invariant 11): the one way a run schedules its own future check, for the
 * LLM's schedule_next_check and the rules policy alike. A check sooner than WAKE_MIN_DELAY_S is
 * raised to that floor (and the caller is told), and an agent may create at most WAKES_PER_HOUR
 * self-scheduled wakes in any hour (cancelled ones count: creating and cancelling is no way
 * around it). Past the budget the request is refused with WakeBudgetError, whose message says
 * what to do instead. Runs of one agent never overlap, so counting and then creating is exact.
 */
import { and, asc, eq, gt, isNotNull } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { wakes } from "../schema/index.ts";
import { createWake } from "./wakes.ts";
import type { RunFence } from "./run-fence.ts";

const HOUR_MS = 3_600_000;

export class WakeBudgetError extends Error {
  readonly status = 429;
  constructor(
    readonly limit: number,
    readonly nextFreeAt: number | null,
  ) {
    super(
      `wake budget exhausted: you scheduled ${limit} checks in the last hour (WAKES_PER_HOUR=${limit}); ` +
        (nextFreeAt !== null ? `the next can be scheduled after ${new Date(nextFreeAt).toISOString()}. ` : "") +
        "Do not retry now: you will be woken by instance reports and human messages anyway; " +
        "if something needs a person to watch it, use notify_human.",
    );
    this.name = "WakeBudgetError";
  }
}

export interface WakeBudget {
  limit: number;
  /** Self-scheduled wakes created in the last hour. */
  used: number;
  /** When the oldest of them leaves the hour (a slot frees), or null when under the limit. */
  nextFreeAt: number | null;
}

export async function wakeBudget(deps: Pick<PipelineDeps, "db" | "clock" | "config">, agentId: string): Promise<WakeBudget> {
  const now = deps.clock.now();
  return wakeBudgetFrom(deps.config.wakesPerHour, await selfWakesInHour(deps, agentId, now), now);
}

/** Statement: the creation times of the agent's self-scheduled wakes in the hour before `now`, oldest first. */
export function selfWakesInHour(deps: Pick<PipelineDeps, "db">, agentId: string, now: number) {
  return deps.db
    .select({ createdAt: wakes.createdAt })
    .from(wakes)
    .where(and(eq(wakes.agentId, agentId), isNotNull(wakes.createdByRun), gt(wakes.createdAt, now - HOUR_MS)))
    .orderBy(asc(wakes.createdAt));
}

/** The budget from selfWakesInHour's rows. */
export function wakeBudgetFrom(limit: number, recent: readonly { createdAt: number }[], now: number): WakeBudget {
  const used = recent.length;
  const nextFreeAt = used >= limit ? (recent[used - limit]?.createdAt ?? now) + HOUR_MS : null;
  return { limit, used, nextFreeAt };
}

export interface SelfWakeRequest {
  dueAt: number;
  reason: string;
  createdByRun: number;
  /** The creating run's fence (invariant 8). */
  fence?: RunFence | null;
  /** A re-check of one instance, and the state it should be in by then. */
  instanceId?: string;
  awaitState?: string;
}

export interface ScheduledSelfWake {
  id: number;
  dueAt: number;
  /** Set when the requested time was sooner than the floor: the time asked for. */
  raisedFrom?: number;
  /** Self-scheduled wakes still allowed in the current hour after this one. */
  budgetLeft: number;
}

export async function scheduleSelfWake(deps: PipelineDeps, agentId: string, request: SelfWakeRequest): Promise<ScheduledSelfWake> {
  const floor = deps.clock.now() + deps.config.wakeMinDelayMs;
  const budget = await wakeBudget(deps, agentId);
  if (budget.used >= budget.limit) throw new WakeBudgetError(budget.limit, budget.nextFreeAt);
  const dueAt = Math.max(request.dueAt, floor);
  const wake = await createWake(deps, agentId, { ...request, dueAt });
  return { ...wake, ...(dueAt > request.dueAt ? { raisedFrom: request.dueAt } : {}), budgetLeft: budget.limit - budget.used - 1 };
}
