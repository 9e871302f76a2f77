/**
 * The effect-loop invariants the effects simulation checks after every step (read through its
 * own connection): no side effect recorded by a run after its lease expired or after another run
 * claimed; the poison limit (poison-invariants.ts); conversation turns
 * stored only for runs that succeeded and were not no-ops; each economics once-notice sent once,
 * and at most one pending approval per instance and action.
 */
import type { Client } from "@libsql/client";
import type { RunFence } from "../../pipeline/index.ts";
import { checkPoison } from "./poison-invariants.ts";

/** Every write attributed to a run, with when it was written. */
const RUN_WRITES = `
  select 'action' as what, id, run_id as run, created_at as at from actions where run_id is not null and decided_by != 'human'
  union all select 'approval', id, run_id, created_at from approvals where run_id is not null
  union all select 'wake', id, created_by_run, created_at from wakes where created_by_run is not null
  union all select 'notification', id, run_id, created_at from notifications where run_id is not null
  union all select 'memory', 0, created_by_run, updated_at from memory where created_by_run is not null`;

export async function checkEffectInvariants(db: Client, fences: ReadonlyMap<number, RunFence>, maxAttempts: number): Promise<string[]> {
  const violations: string[] = [];
  const runs = (await db.execute("select run_id, status, noop, started_at from runs order by run_id")).rows;
  const started = new Map(runs.map((r) => [Number(r.run_id), Number(r.started_at)]));

  for (const w of (await db.execute(RUN_WRITES)).rows) {
    const run = Number(w.run);
    const at = Number(w.at);
    const fence = fences.get(run);
    if (!fence) {
      violations.push(`${w.what} ${w.id} names run ${run}, which never ran a step`);
      continue;
    }
    if (at >= fence.leaseExpiresAt)
      violations.push(`${w.what} ${w.id} was written by run ${run} at ${at}, after its lease expired at ${fence.leaseExpiresAt}`);
    const later = [...started].find(([id, start]) => id > run && start < at);
    if (later) violations.push(`${w.what} ${w.id} was written by run ${run} at ${at}, after run ${later[0]} claimed at ${later[1]}`);
  }

  violations.push(...(await checkPoison(db, maxAttempts)));

  // A once-notice reaches a human once: one notification per once-mark key, never folded repeats.
  const twice = await db.execute(`select o.key, count(n.id) as n, coalesce(sum(n.repeats), 0) as repeats from once_notices o
    join notifications n on n.agent_id = o.agent_id and n.dedup_key = o.key group by o.agent_id, o.key having count(n.id) > 1 or sum(n.repeats) > 0`);
  for (const row of twice.rows) violations.push(`once-notice ${row.key} sent ${row.n} times (${row.repeats} folded repeats)`);
  const pendingTwice = await db.execute(
    `select instance_id, kind, count(*) as n from approvals where status = 'pending' group by agent_id, instance_id, kind having count(*) > 1`,
  );
  for (const row of pendingTwice.rows) violations.push(`${row.n} pending approvals to ${row.kind} ${row.instance_id}`);

  const stray = await db.execute(`select distinct m.run_id, r.status, r.noop from messages m left join runs r on r.run_id = m.run_id
    where r.run_id is null or r.status != 'succeeded' or r.noop != 0`);
  for (const row of stray.rows)
    violations.push(`conversation turns stored for run ${row.run_id} (${row.status ?? "unknown"}, noop ${row.noop})`);
  return violations;
}
