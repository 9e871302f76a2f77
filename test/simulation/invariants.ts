/**
 * The pipeline's invariants, checked against the database and what the run step saw:
 * run ids are 1..runCounter with no gaps and at most one `running`; no event or wake is consumed
 * by two successful runs; and, once the system has settled, every accepted event and every due
 * wake was consumed by exactly one successful run (or dropped as poison, and told once: the
 * poison limit of poison-invariants.ts, judged once at the end, since every trace of a breach
 * stays recorded) and no run is left `running`.
 */
import type { Db } from "../../db/client.ts";
import type { SimStep } from "./sim-step.ts";
import { checkPoison } from "./poison-invariants.ts";

type Rows = Record<string, unknown>[];

async function query(db: Db, sql: string, args: (number | string)[] = []): Promise<Rows> {
  return (await db.$client.execute({ sql, args })).rows as unknown as Rows;
}

function countBySucceeded(sim: SimStep, succeeded: Set<number>, pick: (r: SimStep["runs"][number]) => number[]) {
  const counts = new Map<number, number>();
  for (const run of sim.runs) {
    if (!succeeded.has(run.runId)) continue;
    for (const id of pick(run)) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

async function succeededRuns(db: Db): Promise<Set<number>> {
  const rows = await query(db, "select run_id from runs where status = 'succeeded'");
  return new Set(rows.map((r) => Number(r.run_id)));
}

export async function checkInvariants(db: Db, sim: SimStep): Promise<string[]> {
  const problems: string[] = [];
  const [agent] = await query(db, "select run_counter from agents where id = 'default'");
  const [runs] = await query(db, "select count(*) as n, coalesce(max(run_id), 0) as top, sum(status = 'running') as running from runs");
  const counter = Number(agent!.run_counter);
  if (Number(runs!.n) !== counter || Number(runs!.top) !== counter)
    problems.push(`run ids are not 1..${counter}: ${runs!.n} rows, max ${runs!.top}`);
  if (Number(runs!.running ?? 0) > 1) problems.push(`${runs!.running} runs are running at once`);
  const succeeded = await succeededRuns(db);
  for (const [id, n] of countBySucceeded(sim, succeeded, (r) => r.eventIds))
    if (n > 1) problems.push(`event ${id} consumed by ${n} successful runs`);
  for (const [id, n] of countBySucceeded(sim, succeeded, (r) => r.wakeIds))
    if (n > 1) problems.push(`wake ${id} consumed by ${n} successful runs`);
  return problems;
}

export async function checkSettled(db: Db, sim: SimStep, now: number, maxAttempts: number): Promise<string[]> {
  const problems: string[] = [];
  const succeeded = await succeededRuns(db);
  const running = await query(db, "select run_id from runs where status = 'running'");
  if (running.length) problems.push(`runs left running: ${running.map((r) => r.run_id).join(", ")}`);
  const eventCounts = countBySucceeded(sim, succeeded, (r) => r.eventIds);
  for (const e of await query(db, "select id, status, run_id from events where status <> 'dropped'")) {
    const id = Number(e.id);
    if (e.status !== "consumed" || !succeeded.has(Number(e.run_id)) || eventCounts.get(id) !== 1) {
      problems.push(`event ${id} ended ${e.status} (run ${e.run_id}), seen by ${eventCounts.get(id) ?? 0} successful runs`);
    }
  }
  const wakeCounts = countBySucceeded(sim, succeeded, (r) => r.wakeIds);
  // Dropped as poison (invariant 9) is an end too, but only once the attempts reached the limit.
  problems.push(...(await checkPoison(db.$client, maxAttempts, true)));
  for (const w of await query(
    db,
    "select id, status, consumed_by_run from wakes where status not in ('cancelled', 'dropped') and due_at <= ?",
    [now],
  )) {
    const id = Number(w.id);
    if (w.status !== "consumed" || !succeeded.has(Number(w.consumed_by_run)) || wakeCounts.get(id) !== 1) {
      problems.push(`due wake ${id} ended ${w.status} (run ${w.consumed_by_run}), seen by ${wakeCounts.get(id) ?? 0} successful runs`);
    }
  }
  return problems;
}
