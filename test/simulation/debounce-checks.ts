/**
 * What the debounce promises (DESIGN.md, trigger pipeline step 2), as the pipeline simulation
 * checks it around every run request it makes, from the agent row read before and after:
 * - absorbing: a request the already-scheduled run covers (scheduled at or before now + window)
 *   changes neither the slot nor the scheduled time;
 * - scheduling: any other request of a new event moves the run to exactly now + window.
 * And from the runs, for the events of a burst: each is first claimed by the end of its window,
 * or by the end of the run that held the lease when it arrived, plus the largest clock step the
 * driver took between delivering what was due. A debounce that slides (every request moves the
 * run later) starves a steady burst past that bound.
 */
import type { Client } from "@libsql/client";
import type { SimRun } from "./sim-step.ts";

export interface Schedule {
  nextRunAt: number | null;
  slot: number;
  /** The run holding the lease, if one does. */
  leaseRunId: number | null;
}

export async function readSchedule(db: Client, agentId: string): Promise<Schedule> {
  const [row] = (await db.execute({ sql: "select next_run_at, run_slot, lease_run_id from agents where id = ?", args: [agentId] })).rows;
  const nullable = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return { nextRunAt: nullable(row!.next_run_at), slot: Number(row!.run_slot), leaseRunId: nullable(row!.lease_run_id) };
}

/**
 * Judges one request for a run at `target` (now + its window). `scheduled`: the request stored
 * a new event (or otherwise certainly ran), so an uncovered request must have moved the run.
 */
export function judgeRequest(what: string, before: Schedule, after: Schedule, target: number, scheduled: boolean): string[] {
  const covered = before.nextRunAt !== null && before.nextRunAt <= target;
  if (covered && (after.slot !== before.slot || after.nextRunAt !== before.nextRunAt)) {
    return [
      `${what} (window ending ${target}) was covered by the run scheduled at ${before.nextRunAt}, yet moved slot ${before.slot} at ${before.nextRunAt} to slot ${after.slot} at ${after.nextRunAt}`,
    ];
  }
  if (!covered && scheduled && (after.nextRunAt !== target || after.slot === before.slot)) {
    return [
      `${what} (window ending ${target}) was not covered (run scheduled at ${before.nextRunAt}), yet left slot ${after.slot} at ${after.nextRunAt}`,
    ];
  }
  return [];
}

/** An event of a burst: when it arrived, when its window ended, and the run holding the lease then. */
export interface Arrival {
  eventId: number;
  at: number;
  windowEnd: number;
  inFlight: number | null;
}

/**
 * Each arrival's first claim (runs are in claim order) came by its window's end, or by the end of
 * the run in flight when it arrived, plus `slack`. An arrival never claimed is checkSettled's to report.
 */
export function lateClaims(
  arrivals: readonly Arrival[],
  runs: readonly SimRun[],
  finishedAt: ReadonlyMap<number, number>,
  slack: number,
): string[] {
  const problems: string[] = [];
  for (const a of arrivals) {
    const first = runs.find((r) => r.eventIds.includes(a.eventId));
    if (!first) continue;
    const freed = a.inFlight === null ? a.at : (finishedAt.get(a.inFlight) ?? Infinity);
    const bound = Math.max(a.windowEnd, freed) + slack;
    if (first.claimedAt > bound) {
      problems.push(
        `event ${a.eventId} arrived at ${a.at} (window ending ${a.windowEnd}${a.inFlight === null ? "" : `, run ${a.inFlight} in flight until ${freed}`}) and was first claimed by run ${first.runId} at ${first.claimedAt}, after ${bound}`,
      );
    }
  }
  return problems;
}
