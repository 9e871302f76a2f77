/**
 * requestRun: per-priority debounce kept in the database, never in memory. The agent row holds
 * the one scheduled run time and a slot number; moving the time bumps the slot, and every run
 * delivery names its slot, so deliveries of superseded slots arrive, find a newer slot and do
 * nothing. A request that an already-scheduled run covers (scheduled at or before now+window)
 * changes nothing and publishes nothing: that is how a burst becomes one run.
 */
import { and, eq, gt, isNull, or, sql, type SQL } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import type { Config } from "../runtime/config.ts";
import { agents } from "../schema/index.ts";

/** 0 = a human or manual trigger; 1 = a state change or a due wake. */
export type Priority = 0 | 1;

export function debounceWindow(config: Config, priority: Priority): number {
  return priority === 0 ? config.debounceHumanMs : config.debounceStateMs;
}

/**
 * The UPDATE that moves the scheduled run to `target` unless one is already scheduled at or
 * before it. Returns the new slot and time, or no row when the request was absorbed. `onlyIf`
 * lets a caller batch it behind its own write (ingest: only if the event is still pending).
 */
export function scheduleRunStatement(deps: PipelineDeps, agentId: string, target: number, onlyIf?: SQL) {
  return deps.db
    .update(agents)
    .set({ nextRunAt: target, runSlot: sql`${agents.runSlot} + 1` })
    .where(and(eq(agents.id, agentId), or(isNull(agents.nextRunAt), gt(agents.nextRunAt, target)), onlyIf))
    .returning({ slot: agents.runSlot, runAt: agents.nextRunAt });
}

/** Publishes the one delivery of a slot. The dedup key makes a repeated publish harmless. */
export async function publishRunSlot(deps: PipelineDeps, agentId: string, slot: number, runAt: number, suffix = ""): Promise<void> {
  await deps.scheduler.publish({
    dedupKey: `run:${agentId}:${slot}${suffix}`,
    notBefore: runAt,
    body: { type: "run", agentId, slot },
  });
}

export interface RunRequest {
  /** False when an already-scheduled run absorbed the request. */
  scheduled: boolean;
}

/** Asks for a run of `agentId` within the priority's debounce window. */
export async function requestRun(deps: PipelineDeps, agentId: string, priority: Priority): Promise<RunRequest> {
  const target = deps.clock.now() + debounceWindow(deps.config, priority);
  const [moved] = await scheduleRunStatement(deps, agentId, target);
  if (!moved) return { scheduled: false };
  await publishRunSlot(deps, agentId, moved.slot, moved.runAt ?? target);
  return { scheduled: true };
}
