/**
 * The effect-loop invariants the effects simulation checks after every step, as SQL over the
 * simulation's database (so they judge what was recorded, not what the code meant to do):
 * - no echo: a start or reboot causes at most one extra run through reports of the states it
 *   leads to, until its deadline, the next action on the instance or a failure made on purpose;
 * - the floor: no self-scheduled wake is due sooner than WAKE_MIN_DELAY_S after it was made;
 * - the budget: in any hour, at most WAKES_PER_HOUR self-scheduled wakes are made, and at most
 *   WAKES_PER_HOUR + 1 runs are woken by them (a wake made late in one hour comes due in the
 *   next, so one run more than the budget can fall into a window that straddles the two);
 * - a "no" sticks: no approval for a rejected (instance, action) is filed inside its cooldown,
 *   unless a run answering a human message asked for it; and the rules policy does not even try
 *   it (no action of it recorded, not a refused one either, so no "failed" page follows);
 * - at most one pending approval per (instance, action).
 */
import type { Client } from "@libsql/client";
import type { Config } from "../../runtime/config.ts";

const HOUR_MS = 3_600_000;

/** A failure the simulation caused on purpose (not an echo of anything). */
export interface InjectedFailure {
  instanceId: string;
  at: number;
}

export async function checkEffectInvariants(raw: Client, config: Config, failures: readonly InjectedFailure[]): Promise<string[]> {
  const violations: string[] = [];
  const acted = await raw.execute(
    "select id, kind, instance_id, created_at from actions where kind in ('start', 'reboot') and status = 'succeeded' order by id",
  );
  const reports = await raw.execute(
    `select json_extract(payload, '$.instanceId') as instance_id, run_id, status, created_at from events
     where source in ('webhook', 'reconcile') and status <> 'dropped'
       and json_extract(payload, '$.state') in ('created', 'loading', 'rebooting', 'running')`,
  );
  for (const a of acted.rows) {
    const at = Number(a.created_at);
    // The echo window: until the expectation's deadline, a failure made on purpose, or the next action.
    const ends = [
      at + config.loadingTimeoutMs,
      ...failures.filter((f) => f.instanceId === a.instance_id && f.at > at).map((f) => f.at),
      ...acted.rows.filter((b) => b.instance_id === a.instance_id && Number(b.id) > Number(a.id)).map((b) => Number(b.created_at)),
    ];
    const end = Math.min(...ends);
    const woke = new Set(
      reports.rows
        .filter((e) => e.instance_id === a.instance_id && Number(e.created_at) >= at && Number(e.created_at) < end)
        .map((e) => (e.status === "pending" ? "pending" : String(e.run_id))),
    );
    if (woke.size > 1)
      violations.push(`no echo: ${a.kind} ${a.instance_id} (action ${a.id}) caused ${woke.size} runs through its own echo`);
  }

  const early = await raw.execute({
    sql: "select id, due_at - created_at as delay from wakes where created_by_run is not null and due_at - created_at < ?",
    args: [config.wakeMinDelayMs],
  });
  for (const r of early.rows) violations.push(`wake floor: self-scheduled wake ${r.id} due ${r.delay} ms after it was made`);

  const made = await raw.execute("select created_at from wakes where created_by_run is not null order by created_at");
  const madeAt = made.rows.map((r) => Number(r.created_at));
  if (maxInAnHour(madeAt) > config.wakesPerHour)
    violations.push(`wake budget: ${maxInAnHour(madeAt)} self-scheduled wakes made within an hour (budget ${config.wakesPerHour})`);
  const wakeRuns = await raw.execute(
    `select distinct r.run_id, r.started_at from runs r join wakes w on w.consumed_by_run = r.run_id and w.agent_id = r.agent_id
     where w.created_by_run is not null order by r.started_at`,
  );
  const woken = maxInAnHour(wakeRuns.rows.map((r) => Number(r.started_at)));
  if (woken > config.wakesPerHour + 1)
    violations.push(`wake budget: ${woken} runs woken by self-scheduled wakes within an hour (budget ${config.wakesPerHour} + 1)`);

  const reasked = await raw.execute(
    `select a.id, a.kind, a.instance_id, a.requested_by, b.id as block from approvals a join action_blocks b
       on b.agent_id = a.agent_id and b.instance_id = a.instance_id and b.kind = a.kind
     where a.created_at > b.rejected_at and a.created_at < b.until and (b.lifted_at is null or a.created_at < b.lifted_at)
       and (a.requested_by <> 'llm' or not exists (select 1 from events e where e.agent_id = a.agent_id and e.run_id = a.run_id and e.source = 'human'))`,
  );
  for (const r of reasked.rows)
    violations.push(`a no sticks: approval ${r.id} (${r.kind} ${r.instance_id}, by ${r.requested_by}) filed inside block ${r.block}`);

  const retried = await raw.execute(
    `select a.id, a.kind, a.instance_id, a.status, a.run_id, b.id as block from actions a join action_blocks b
       on b.agent_id = a.agent_id and b.instance_id = a.instance_id and b.kind = a.kind
     where a.decided_by = 'rules' and a.created_at > b.rejected_at and a.created_at < b.until and (b.lifted_at is null or a.created_at < b.lifted_at)`,
  );
  for (const r of retried.rows)
    violations.push(
      `a no sticks: the rules policy tried ${r.kind} ${r.instance_id} (action ${r.id}, ${r.status}, run ${r.run_id}) inside block ${r.block}`,
    );

  const doubled = await raw.execute(
    "select instance_id, kind, count(*) as n from approvals where status = 'pending' group by agent_id, instance_id, kind having n > 1",
  );
  for (const r of doubled.rows) violations.push(`pending twice: ${r.n} pending approvals for ${r.kind} ${r.instance_id}`);
  return violations;
}

/** The most timestamps (sorted) inside any one-hour window. */
function maxInAnHour(sorted: readonly number[]): number {
  let most = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= HOUR_MS) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}
