/**
 * What the action table (fleet/actions/decide.ts) reads about a request, gathered in one batch:
 * the action recorded under its key, the pending approval of the same kind on the same instance,
 * the active rejection block on it, and today's spend. One round trip; a second only when a block
 * exists and the LLM decided (did a human ask again in this run?). Nothing is decided here.
 */
import { and, eq } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { approvals, instances } from "../../schema/index.ts";
import { lacks } from "../providers/capabilities.ts";
import { spendTodayStatement } from "../economics/spend.ts";
import { actionQuery, type ActionRow } from "./action-records.ts";
import { activeBlockQuery, blockHolds, type ActionBlock } from "./action-blocks.ts";
import type { ActionRequest } from "./action-types.ts";
import { NOT_BILLING_STATES, SPENDING_KINDS, type ActionFacts } from "./decide.ts";
import { overOwnerBudget, ownerRentalsStatement, ownerSpendTodayStatement, rentalCostToday } from "../leases/owner-budget.ts";
import { breakerEpisodeReads, breakerTrips, fleetHealthReads, fleetShare, liftedFrom, REMEDIATION_KINDS } from "./fleet-breaker.ts";

type FactDeps = Pick<FleetDeps, "db" | "clock" | "config" | "provider">;

/** The facts, and the rows behind them that carrying out an outcome answers with. */
export interface Gathered {
  facts: ActionFacts;
  recorded?: ActionRow;
  pending?: typeof approvals.$inferSelect;
  block?: ActionBlock;
  /** Today's spend, when there is a daily limit. */
  spendToday: number | null;
}

export async function gatherFacts(deps: FactDeps, request: ActionRequest): Promise<Gathered> {
  const { config } = deps;
  const base = {
    kind: request.kind,
    decidedBy: request.decidedBy,
    approvedByHuman: request.decidedBy === "human" && request.approvalId !== undefined,
    operatorAsks: request.decidedBy === "human" && request.approvalId === undefined && request.operator !== undefined,
    shadow: config.mode === "shadow",
    approvalListed: config.approvalRequired.includes(request.kind),
    twoPerson: config.approvalTwoPerson.includes(request.kind),
    callerAsks: request.askHuman ?? null,
  };
  const none = {
    recorded: false,
    pendingApproval: false,
    rejected: false,
    overSpendLimit: false,
    addsSpend: false,
    fleetBreakerOpen: false,
  };
  if (lacks(deps.provider, request.kind)) return { facts: { ...base, ...none, providerCannot: true }, spendToday: null };

  const { db } = deps;
  const now = deps.clock.now();
  const [[recorded], [pending], [block], [spent], [instance]] = await db.batch([
    actionQuery(deps, request.agentId, request.idempotencyKey),
    db
      .select()
      .from(approvals)
      .where(
        and(
          eq(approvals.agentId, request.agentId),
          eq(approvals.instanceId, request.instanceId),
          eq(approvals.kind, request.kind),
          eq(approvals.status, "pending"),
        ),
      )
      .limit(1),
    activeBlockQuery(deps, request.agentId, request.instanceId, request.kind),
    spendTodayStatement(deps, request.agentId, now),
    db
      .select({ state: instances.state, goneAt: instances.goneAt })
      .from(instances)
      .where(and(eq(instances.agentId, request.agentId), eq(instances.id, request.instanceId))),
  ]);
  const limit = config.economics.spendLimitPerDayUsd;
  const spendToday = limit === null ? null : Number(spent?.usd ?? 0);
  const rejected = block !== undefined && (await blockHolds(deps, request));
  return {
    facts: {
      ...base,
      providerCannot: false,
      recorded: recorded !== undefined,
      pendingApproval: pending !== undefined,
      rejected,
      overSpendLimit: limit !== null && spendToday !== null && spendToday >= limit,
      // A reboot of an instance that is not running starts billing again, as a start does.
      addsSpend:
        SPENDING_KINDS.has(request.kind) ||
        (request.kind === "reboot" && instance !== undefined && instance.goneAt === null && NOT_BILLING_STATES.has(instance.state)),
      fleetBreakerOpen: await breakerOpen(deps, request, now),
      ...(await ownerFacts(deps, request, now)),
    },
    ...(recorded ? { recorded } : {}),
    ...(pending ? { pending } : {}),
    ...(block ? { block } : {}),
    spendToday,
  };
}

/**
 * The fleet breaker, read live (not from the watchdog's last tick, so a run right after the deaths
 * is held too), and only for what it can hold: remediation a rule or a model decided.
 */
async function breakerOpen(deps: FactDeps, request: ActionRequest, now: number): Promise<boolean> {
  if (request.decidedBy === "human" || !REMEDIATION_KINDS.has(request.kind)) return false;
  const fleet = fleetHealthReads(deps, request.agentId, now);
  const episode = breakerEpisodeReads(deps, request.agentId);
  const [rows, listed, open, lifts] = await deps.db.batch([fleet.instances, fleet.listed, episode.episode, episode.lifts]);
  if (!breakerTrips(deps.config, fleetShare(rows, listed[0]?.at ?? null))) return false;
  return !liftedFrom(open, lifts);
}

/** The owner budget and rentals-per-hour facts of a rental (nothing for other kinds). */
async function ownerFacts(
  deps: FactDeps,
  request: ActionRequest,
  now: number,
): Promise<Pick<ActionFacts, "ownerOverBudget" | "ownerRentalsLastHour">> {
  const rent = request.rent;
  if (request.kind !== "rent" || !rent) return {};
  const [[spent], [rentals]] = await deps.db.batch([
    ownerSpendTodayStatement(deps, request.agentId, rent.owner, now),
    ownerRentalsStatement(deps, request.agentId, rent.owner, now),
  ]);
  const limit = deps.config.economics.ownerSpendLimitPerDayUsd;
  const cost = rentalCostToday(rent.maxPricePerHour, rent.leaseSeconds, now);
  return {
    ownerOverBudget: overOwnerBudget(rent.owner, limit, Number(spent?.usd ?? 0), cost),
    ownerRentalsLastHour: Number(rentals?.n ?? 0),
  };
}
