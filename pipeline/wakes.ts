/**
 * Wakes: the agent's promised checks. A wake is a row (pending | consumed | cancelled) whose
 * delivery is published for its due time; when it arrives, a run is requested for that due time
 * (not through the state-change debounce: "check again in 60 s" runs at 60 s), and the claim
 * consumes the wake in the same batch that starts the run. The cron tick requests runs for due
 * wakes whose delivery went missing. A cap on pending wakes keeps a confused agent from
 * flooding its own schedule.
 *
 * Due times are wall-clock times, so a wall clock stepped back (NTP, `date -s`) would make a
 * promised re-check fire that much late. Each cron tick asks whether the host's wall clock stepped
 * back since the last tick (runtime/clock.ts wallSteppedBack, by monotonic time) and moves every
 * pending wake's due time back by the step, re-publishing its delivery: a check promised "in 10
 * minutes" still comes 10 minutes later. Bound: one UPDATE per detected step (each step is
 * reported once), at most MAX_PENDING_WAKES re-published deliveries per agent.
 */
import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { insertWhere } from "../db/insert-where.ts";
import { wakes } from "../schema/index.ts";
import { requestRunAt } from "./request-run.ts";
import { fencedWrite, type RunFence } from "./run-fence.ts";
import { wallSteppedBack } from "../runtime/clock.ts";

/** A backward step shorter than this is drift, not worth moving wakes for. */
export const CLOCK_STEP_MIN_MS = 1000;

/**
 * After a backward step of the wall clock, moves every pending wake's due time back by the step
 * and re-publishes its delivery (see the header); answers how many wakes moved.
 */
export async function rebaseWakesOnClockStep(deps: Pick<PipelineDeps, "db" | "clock" | "scheduler" | "log">): Promise<number> {
  const step = Math.round(wallSteppedBack(deps.clock));
  if (step < CLOCK_STEP_MIN_MS) return 0;
  const moved = await deps.db
    .update(wakes)
    .set({ dueAt: sql`${wakes.dueAt} - ${step}` })
    .where(eq(wakes.status, "pending"))
    .returning({ id: wakes.id, agentId: wakes.agentId, dueAt: wakes.dueAt });
  deps.log.info("the wall clock stepped back: pending wakes moved back by the step", { stepMs: step, wakes: moved.length });
  for (const wake of moved) await publishWake(deps, wake.agentId, wake.id, wake.dueAt, `:at:${wake.dueAt}`);
  return moved.length;
}

export class WakeLimitError extends Error {
  readonly status = 409;
  constructor(limit: number) {
    super(`pending wake limit reached: at most ${limit} pending wakes per agent; cancel one first`);
    this.name = "WakeLimitError";
  }
}

export interface NewWake {
  dueAt: number;
  reason: string;
  createdByRun: number | null;
  /** The creating run's fence; absent or null when no run creates it. */
  fence?: RunFence | null;
  /** A re-check of one instance, and the state it should be in by then (shown in the prompt). */
  instanceId?: string;
  awaitState?: string;
}

/** Stores a wake (unless the agent is at its cap) and publishes its delivery for the due time. */
export async function createWake(
  deps: Pick<PipelineDeps, "db" | "clock" | "config" | "scheduler">,
  agentId: string,
  wake: NewWake,
): Promise<{ id: number; dueAt: number }> {
  const { db, clock, config } = deps;
  const now = clock.now();
  const pending = sql`(select count(*) from ${wakes} where ${wakes.agentId} = ${agentId} and ${wakes.status} = 'pending')`;
  const [created] = await fencedWrite(deps, wake.fence, "creating a wake", (holds) =>
    insertWhere(
      db,
      wakes,
      {
        agentId,
        dueAt: wake.dueAt,
        reason: wake.reason,
        status: "pending",
        createdByRun: wake.createdByRun,
        instanceId: wake.instanceId ?? null,
        awaitState: wake.awaitState ?? null,
        createdAt: now,
      },
      and(sql`${pending} < ${config.maxPendingWakes}`, holds)!,
    ).returning({ id: wakes.id }),
  );
  if (!created) throw new WakeLimitError(config.maxPendingWakes);
  await publishWake(deps, agentId, created.id, wake.dueAt);
  return { id: created.id, dueAt: wake.dueAt };
}

export async function publishWake(
  deps: Pick<PipelineDeps, "scheduler">,
  agentId: string,
  wakeId: number,
  dueAt: number,
  suffix = "",
): Promise<void> {
  await deps.scheduler.publish({
    dedupKey: `wake:${agentId}:${wakeId}${suffix}`,
    notBefore: dueAt,
    body: { type: "wake", agentId, wakeId },
  });
}

/** Cancels a pending wake; false when it does not exist or is no longer pending. */
export async function cancelWake(
  deps: Pick<PipelineDeps, "db" | "clock">,
  agentId: string,
  wakeId: number,
  fence: RunFence | null = null,
): Promise<boolean> {
  const rows = await fencedWrite(deps, fence, `cancelling wake ${wakeId}`, (holds) =>
    deps.db
      .update(wakes)
      .set({ status: "cancelled" })
      .where(and(eq(wakes.agentId, agentId), eq(wakes.id, wakeId), eq(wakes.status, "pending"), holds))
      .returning({ id: wakes.id }),
  );
  return rows.length > 0;
}

/** A wake's delivery: request a run if the wake is pending and due (re-publish if early). */
export async function handleWakeDelivery(deps: PipelineDeps, agentId: string, wakeId: number): Promise<"requested" | "early" | "gone"> {
  const [wake] = await deps.db
    .select({ status: wakes.status, dueAt: wakes.dueAt })
    .from(wakes)
    .where(and(eq(wakes.agentId, agentId), eq(wakes.id, wakeId)));
  if (wake?.status !== "pending") return "gone";
  if (wake.dueAt > deps.clock.now()) {
    await publishWake(deps, agentId, wakeId, wake.dueAt, `:at:${wake.dueAt}`);
    return "early";
  }
  await requestRunAt(deps, agentId, wake.dueAt);
  return "requested";
}

export async function listWakes(deps: PipelineDeps, agentId: string, status?: string, limit = 100) {
  const where = status ? and(eq(wakes.agentId, agentId), eq(wakes.status, status)) : eq(wakes.agentId, agentId);
  return deps.db
    .select()
    .from(wakes)
    .where(where)
    .orderBy(status === "pending" ? asc(wakes.dueAt) : desc(wakes.id))
    .limit(limit);
}
