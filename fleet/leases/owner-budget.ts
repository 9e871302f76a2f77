/**
 * What the rental gates read about a lease owner (issue #35, item 2): what their leases on this
 * agent cost today (each leased instance's price × the hours of today it is leased for) and
 * how many rentals they asked for in the last hour. Read by fleet/actions/action-facts.ts for kind
 * `rent` only; the gates themselves are rows of fleet/actions/decide.ts ("owner budget", "owner
 * rentals per hour"). Two statements, no loop.
 */
import { and, eq, gt, ne, sql } from "drizzle-orm";
import { DAY_MS, HOUR_MS } from "../../runtime/time.ts";
import { actions, instances, leases } from "../../schema/index.ts";
import type { FleetDeps } from "../deps.ts";

/** Start of the UTC day holding `now`. */
export const utcDayStart = (now: number) => Math.floor(now / DAY_MS) * DAY_MS;

/** How long before its lease a rent action can have been claimed (offer search and creates). */
const RENT_WINDOW_MS = 10 * 60_000;

/**
 * What the owner's leases cost today, as a statement (for a batch): each lease's $/h over the part
 * of today it is leased for (from its start or midnight to its end, ended or not, or midnight next),
 * so an open lease counts through its lease end as a new rental does. The $/h is the instance's as
 * listed, or, before the provider's listing brings a fresh rental in, the offer its rent action took
 * (read on the (agent, created) index within the minutes before the lease was opened).
 */
export function ownerSpendTodayStatement(deps: Pick<FleetDeps, "db">, agentId: string, owner: string, now: number) {
  const dayStart = utcDayStart(now);
  const dayEnd = dayStart + DAY_MS;
  const until = sql`min(${dayEnd}, coalesce(${leases.endedAt}, ${leases.endsAt}))`;
  const from = sql`max(${dayStart}, ${leases.createdAt})`;
  const offered = sql`(select json_extract(a.result, '$.offer.pricePerHour') from ${actions} a
    where a.agent_id = ${leases.agentId} and a.created_at between ${leases.createdAt} - ${RENT_WINDOW_MS} and ${leases.createdAt}
      and a.kind = 'rent' and a.status = 'succeeded' and json_extract(a.result, '$.instanceId') = ${leases.instanceId} limit 1)`;
  return deps.db
    .select({
      usd: sql<number>`coalesce(sum(coalesce(${instances.pricePerHour}, ${offered}, 0) * max(0, ${until} - ${from}) / cast(${HOUR_MS} as real)), 0)`,
    })
    .from(leases)
    .leftJoin(instances, and(eq(instances.agentId, leases.agentId), eq(instances.id, leases.instanceId)))
    .where(
      and(
        eq(leases.agentId, agentId),
        eq(leases.owner, owner),
        sql`(${leases.endedAt} is null or ${leases.endedAt} > ${dayStart})`,
        sql`${leases.createdAt} < ${dayEnd}`,
      ),
    );
}

/** The owner's rentals on the agent in the hour before `now` (any status but refused), as a statement. */
export function ownerRentalsStatement(deps: Pick<FleetDeps, "db">, agentId: string, owner: string, now: number) {
  return deps.db
    .select({ n: sql<number>`count(*)` })
    .from(actions)
    .where(
      and(
        eq(actions.agentId, agentId),
        eq(actions.kind, "rent"),
        eq(actions.operator, owner),
        gt(actions.createdAt, now - HOUR_MS),
        ne(actions.status, "refused"),
      ),
    );
}

/** The new rental's cost today: its max $/h over the hours of its lease left in this UTC day. */
export function rentalCostToday(maxPricePerHour: number, leaseSeconds: number, now: number): number {
  const leaseEnd = now + leaseSeconds * 1000;
  const dayEnd = utcDayStart(now) + DAY_MS;
  return (maxPricePerHour * (Math.min(leaseEnd, dayEnd) - now)) / HOUR_MS;
}

/** The refusal with its figures when the rental passes the budget, or null. */
export function overOwnerBudget(owner: string, limit: number | null, spentToday: number, rentalToday: number): string | null {
  if (limit === null) return null;
  const projected = spentToday + rentalToday;
  if (projected <= limit) return null;
  return `refused: owner ${owner}'s leased instances cost $${spentToday.toFixed(2)} today (through their lease ends); this rental adds up to $${rentalToday.toFixed(2)} today, $${projected.toFixed(2)} in all, past OWNER_SPEND_LIMIT_PER_DAY_USD $${limit.toFixed(2)}. Nothing was rented`;
}
