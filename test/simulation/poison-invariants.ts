/**
 * Bounded retries (invariant 9), as the simulations check them, in SQL over what was recorded:
 * no event or wake is claimed by more runs than MAX_EVENT_ATTEMPTS, none is consumed once its
 * attempts reached the limit, none is dropped as poison before, and no drop is told to a human
 * twice (nor is an item that was not dropped). Once the system has settled, everything that
 * reached the limit has ended dropped as poison, and each drop was told exactly once.
 */
import type { Client } from "@libsql/client";

/** Every event and wake with how many runs claimed it and how often its drop was told. */
const ITEMS = `
  with event_claims as (select json_extract(j.value, '$.id') as id, count(*) as n from runs r, json_each(r.triggers) j group by 1),
       wake_claims as (select j.value as id, count(*) as n from runs r, json_each(r.wakes_consumed) j group by 1),
       told as (select dedup_key, count(*) as n, sum(repeats) as repeats from notifications where dedup_key like 'poison:%' group by 1)
  select 'event' as kind, x.id, x.status, x.drop_reason, x.attempts, coalesce(c.n, 0) as claims, coalesce(t.n, 0) as told, coalesce(t.repeats, 0) as repeats
  from events x left join event_claims c on c.id = x.id left join told t on t.dedup_key = 'poison:event:' || x.id
  union all
  select 'wake', x.id, x.status, x.drop_reason, x.attempts, coalesce(c.n, 0), coalesce(t.n, 0), coalesce(t.repeats, 0)
  from wakes x left join wake_claims c on c.id = x.id left join told t on t.dedup_key = 'poison:wake:' || x.id`;

export async function checkPoison(db: Client, maxAttempts: number, settled = false): Promise<string[]> {
  const problems: string[] = [];
  const rows = await db.execute({
    sql: `select * from (${ITEMS}) where claims > ?1 or attempts >= ?1 or drop_reason = 'poison' or told > 0`,
    args: [maxAttempts],
  });
  for (const row of rows.rows) {
    const item = `${row.kind} ${row.id}`;
    const attempts = Number(row.attempts);
    const poisoned = row.status === "dropped" && row.drop_reason === "poison";
    const told = Number(row.told);
    if (Number(row.claims) > maxAttempts || attempts > maxAttempts)
      problems.push(`${item} was claimed by ${row.claims} runs (attempts ${attempts}); the limit is ${maxAttempts}`);
    if (row.status === "consumed" && attempts >= maxAttempts)
      problems.push(
        `${item} was consumed with ${attempts} attempts, at the limit of ${maxAttempts}: it should have been dropped as poison`,
      );
    if (poisoned && attempts < maxAttempts) problems.push(`${item} was dropped as poison after only ${attempts} attempts`);
    if (told > 1 || Number(row.repeats) > 0) problems.push(`${item}'s poison drop was told ${told} times (${row.repeats} repeats folded)`);
    if (told > 0 && !poisoned) problems.push(`${item} has a poison alert but ended ${row.status} (${row.drop_reason ?? "no drop reason"})`);
    if (!settled) continue;
    if (attempts >= maxAttempts && !poisoned)
      problems.push(
        `${item} reached ${attempts} attempts but ended ${row.status} (${row.drop_reason ?? "no drop reason"}), not dropped as poison`,
      );
    if (poisoned && told === 0) problems.push(`${item} was dropped as poison and no human was told`);
  }
  return problems;
}
