/**
 * What the rental gates read about a lease owner (issue #35, item 2): their spend today on this
 * agent (each leased instance's price × the hours of today it was leased, open or ended today) and
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

/** The owner's spend today on their leased instances of the agent, as a statement (for a batch). */
export function ownerSpendTodayStatement(deps: Pick<FleetDeps, "db">, agentId: string, owner: string, now: number) {
  const dayStart = utcDayStart(now);
  const until = sql`min(${now}, coalesce(${leases.endedAt}, ${now}))`;
  const from = sql`max(${dayStart}, ${leases.createdAt})`;
  return deps.db
    .select({
      usd: sql<number>`coalesce(sum(coalesce(${instances.pricePerHour}, 0) * max(0, ${until} - ${from}) / cast(${HOUR_MS} as real)), 0)`,
    })
    .from(leases)
    .leftJoin(instances, and(eq(instances.agentId, leases.agentId), eq(instances.id, leases.instanceId)))
    .where(and(eq(leases.agentId, agentId), eq(leases.owner, owner), sql`(${leases.endedAt} is null or ${leases.endedAt} > ${dayStart})`));
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
  return `refused: owner ${owner} has spent $${spentToday.toFixed(2)} today on leased instances; this rental adds up to $${rentalToday.toFixed(2)} today, $${projected.toFixed(2)} in all, past OWNER_SPEND_LIMIT_PER_DAY_USD $${limit.toFixed(2)}. Nothing was rented`;
}
