/**
 * requestRun: per-priority debounce kept in the database, never in memory. The agent row holds
 * the one scheduled run time and a slot number; moving the time bumps the slot, and every run
 * delivery names its slot, so deliveries of superseded slots arrive, find a newer slot and do
 * nothing. A request that an already-scheduled run covers (scheduled at or before now+window)
 * changes nothing and publishes nothing: that is how a burst becomes one run.
 *
 * The debounce UPDATE is written once (`debounce`): requestRun and the cron tick bind it to
 * values, the inbox's batches bind its prepared form (built once per database) behind their event.
 */
import { and, eq, gt, isNull, or, sql, type Placeholder, type SQL } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import type { Config } from "../runtime/config.ts";
import type { Db } from "../db/client.ts";
import { bind, preparedPerDb } from "../db/prepared.ts";
import { agents, events } from "../schema/index.ts";

/** 0 = a human or manual trigger; 1 = a state change or a due wake. */
export type Priority = 0 | 1;

export function debounceWindow(config: Config, priority: Priority): number {
  return priority === 0 ? config.debounceHumanMs : config.debounceStateMs;
}

/**
 * The debounce, the one definition: moves the scheduled run to `target` and bumps the slot
 * unless a run is already scheduled at or before it; returns the new slot and time, or no row
 * when the request was absorbed. `alsoIf` guards it further (the inbox: its event still pending).
 */
function debounce(db: Db, agentId: string | Placeholder, target: number | Placeholder, alsoIf?: SQL) {
  return db
    .update(agents)
    .set({ nextRunAt: sql`${target}`, runSlot: sql`${agents.runSlot} + 1` })
    .where(and(eq(agents.id, agentId), or(isNull(agents.nextRunAt), gt(agents.nextRunAt, target)), alsoIf))
    .returning({ slot: agents.runSlot, runAt: agents.nextRunAt });
}

/** The debounce UPDATE for a run wanted by `target` (requestRun, the cron tick's repair). */
export function scheduleRunStatement(deps: Pick<PipelineDeps, "db">, agentId: string, target: number) {
  return debounce(deps.db, agentId, target);
}

/** The debounce behind an inbox write, prepared once per database (the hot path of every ingest). */
const scheduleForEvent = preparedPerDb((db) => {
  const agentId = sql.placeholder("agentId");
  const dedupKey = sql.placeholder("dedupKey");
  const eventPending = sql`exists (select 1 from ${events} where ${events.agentId} = ${agentId} and ${events.dedupKey} = ${dedupKey} and ${events.status} = 'pending')`;
  return debounce(db, agentId, sql.placeholder("target"), eventPending).prepare();
});

/**
 * The run request of an ingest batch, after its event insert: the debounce to `target`, only
 * while the event keyed by `dedupKey` is pending (a repeated key whose event was consumed, or an
 * event stored as dropped, requests nothing).
 */
export function scheduleIfPending(deps: Pick<PipelineDeps, "db">, values: { agentId: string; dedupKey: string; target: number }) {
  return bind(scheduleForEvent(deps.db), values);
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
export function requestRun(deps: PipelineDeps, agentId: string, priority: Priority): Promise<RunRequest> {
  return requestRunAt(deps, agentId, deps.clock.now() + debounceWindow(deps.config, priority));
}

/**
 * Asks for a run of `agentId` by `target`, with no window of its own: a due wake's run is wanted
 * at the wake's due time (the check was promised for then). Wakes due together still make one
 * run: the first moves the scheduled run to its time, the rest find it already at or before theirs.
 */
export async function requestRunAt(deps: PipelineDeps, agentId: string, target: number): Promise<RunRequest> {
  const [moved] = await scheduleRunStatement(deps, agentId, target);
  if (!moved) return { scheduled: false };
  await publishRunSlot(deps, agentId, moved.slot, moved.runAt ?? target);
  return { scheduled: true };
}
