/**
 * What the action table (fleet/actions/decide.ts) reads about a request, gathered in one batch:
 * the action recorded under its key, the pending approval of the same kind on the same instance,
 * the active rejection block on it, and today's spend. One round trip; a second only when a block
 * exists and the LLM decided (did a human ask again in this run?). Nothing is decided here.
 */
import { and, eq } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { approvals } from "../../schema/index.ts";
import { lacks } from "../providers/capabilities.ts";
import { spendTodayStatement } from "../economics/spend.ts";
import { actionQuery, type ActionRow } from "./action-records.ts";
import { activeBlockQuery, blockHolds, type ActionBlock } from "./action-blocks.ts";
import type { ActionRequest } from "./action-types.ts";
import type { ActionFacts } from "./decide.ts";

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
  const none = { recorded: false, pendingApproval: false, rejected: false, overSpendLimit: false };
  if (lacks(deps.provider, request.kind)) return { facts: { ...base, ...none, providerCannot: true }, spendToday: null };

  const { db } = deps;
  const [[recorded], [pending], [block], [spent]] = await db.batch([
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
    spendTodayStatement(deps, request.agentId, deps.clock.now()),
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
    },
    ...(recorded ? { recorded } : {}),
    ...(pending ? { pending } : {}),
    ...(block ? { block } : {}),
    spendToday,
  };
}
