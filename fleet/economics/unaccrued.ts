/**
 * Spend not yet accrued (issue 33, item 2): what each instance has cost since its last accrual,
 * so every read (the API, the dashboard, the prompt's snapshot, the spend limit's gate, the
 * budget notices) counts spend up to NOW and the tick's accrual writes exactly that. The one rule
 * lives here twice in lockstep — as `unaccrued` (the tick's plan and the report, in TypeScript) and
 * as `unaccruedTodaySql` (the batched reads) — and test/economics/spend-live.test.ts holds them equal.
 *
 * The stretch runs from the instance's accrual mark (a never-accrued one: its state change, at
 * most ACCRUE_EVERY_MS back) to now, or to when it went gone (destroyed or no longer listed): a
 * rental that lived between two accruals is counted to its end. Its rate is the current state's
 * (fleet/economics/instance-cost.ts), except a gone instance whose last state was recorded at its
 * end (a destroy records `offline` as it marks it gone): what it was before is not kept, so that
 * stretch is priced as rented, erring on the side of spending.
 */
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { instances } from "../../schema/index.ts";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../runtime/time.ts";
import { costPerHour, RENTED_STATES } from "./instance-cost.ts";

/** Time further back than this is not accrued (a host down for weeks): the report shows 7 days. */
export const MAX_ACCRUAL_MS = 8 * DAY_MS;
/** How often a tick accrues an instance's spend: what is not yet accrued is at most this old. */
export const ACCRUE_EVERY_MS = 5 * MINUTE_MS;

export interface UnaccruedInputs {
  state: string;
  stateAt: number;
  pricePerHour: number | null;
  storagePerHour: number | null;
  goneAt?: number | null;
  spendAccruedAt: number | null;
}

export interface Stretch {
  from: number;
  until: number;
  /** USD per hour over the stretch. */
  rate: number;
}

/** The stretch not yet accrued (empty when from >= until) and its rate. */
export function unaccrued(row: UnaccruedInputs, now: number, everyMs = ACCRUE_EVERY_MS): Stretch {
  const gone = row.goneAt !== null && row.goneAt !== undefined;
  const until = gone ? Math.min(now, row.goneAt!) : now;
  const from = Math.max(row.spendAccruedAt ?? Math.max(row.stateAt, until - everyMs), now - MAX_ACCRUAL_MS);
  const endedWithItsState = gone && row.stateAt >= row.goneAt!;
  const rate = endedWithItsState ? (row.pricePerHour ?? 0) : (costPerHour({ ...row, goneAt: null }) ?? 0);
  return { from, until: Math.max(from, until), rate };
}

/** The stretch's cost split at UTC midnights, oldest first. */
export function splitByDay(stretch: Stretch): { day: string; usd: number }[] {
  const parts: { day: string; usd: number }[] = [];
  if (stretch.rate <= 0) return parts;
  let at = stretch.from;
  while (at < stretch.until) {
    const until = Math.min((Math.floor(at / DAY_MS) + 1) * DAY_MS, stretch.until);
    parts.push({ day: new Date(at).toISOString().slice(0, 10), usd: (stretch.rate * (until - at)) / HOUR_MS });
    at = until;
  }
  return parts;
}

/** `unaccrued`, summed over an agent's instances for the UTC day of `now`, as one SQL expression (the agent a value, or a column for a correlated read over agents). */
export function unaccruedTodaySql(agentId: string | SQLWrapper, now: number): SQL<number> {
  const rented = sql.join(
    [...RENTED_STATES].map((s) => sql`${s}`),
    sql`, `,
  );
  const i = instances;
  const until = sql`min(${now}, coalesce(${i.goneAt}, ${now}))`;
  const from = sql`max(coalesce(${i.spendAccruedAt}, max(${i.stateAt}, ${until} - ${ACCRUE_EVERY_MS})), ${now - MAX_ACCRUAL_MS}, ${Math.floor(now / DAY_MS) * DAY_MS})`;
  const rate = sql`case
    when ${i.goneAt} is not null and ${i.stateAt} >= ${i.goneAt} then coalesce(${i.pricePerHour}, 0)
    when ${i.state} in (${rented}) then coalesce(${i.pricePerHour}, 0)
    else coalesce(${i.storagePerHour}, 0) end`;
  return sql<number>`(select coalesce(sum(${rate} * max(0, ${until} - ${from})), 0) / ${HOUR_MS}
    from ${i} where ${i.agentId} = ${agentId})`;
}
