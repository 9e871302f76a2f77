/**
 * Read model of what the fleet cost, for the overview's spend panel and the attention strip: the spend report
 * of fleet/economics/spend.ts (estimated spend today and on each of the last 7 UTC days, per instance
 * today, against the agent's daily limit) in the shape the panels read.
 */
import type { Deps } from "../deps.ts";
import { spendReport } from "../../fleet/economics/spend.ts";

export interface Spend {
  today: number;
  /** Null: no daily limit. */
  limit: number | null;
  /** The last 7 UTC days, oldest first, today last. */
  days: { day: string; usd: number }[];
  /** Today's spend per instance. */
  byInstance: Map<string, number>;
}

export async function loadSpend(deps: Pick<Deps, "db" | "clock" | "config">, agentId: string): Promise<Spend> {
  const report = await spendReport(deps, agentId);
  return {
    today: report.today.usd,
    limit: report.today.limitUsd,
    days: report.days,
    byInstance: new Map(report.instances.map((i) => [i.id, i.usdToday])),
  };
}

/** Dollars as the panels and the attention strip's reasons write them. */
export const dollars = (usd: number) => `$${usd.toFixed(2)}`;

/** Spent today at or over the limit. */
export const overBudget = (spend: Pick<Spend, "today" | "limit">) => spend.limit !== null && spend.today >= spend.limit;
