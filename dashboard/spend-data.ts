/**
 * What the fleet cost, for the overview's spend panel and the attention strip: estimated spend
 * (instance_spend, accrued by fleet/spend.ts) today and on each of the last SPEND_DAYS UTC days,
 * per instance today, against the agent's daily limit (SPEND_LIMIT_PER_DAY_USD or its setting).
 * Read from the database on every render; one batch of two grouped reads.
 */
import { and, eq, gte, sql } from "drizzle-orm";
import type { Deps } from "../jobs/deps.ts";
import { DAY_MS } from "../runtime/time.ts";
import { instanceSpend } from "../schema/index.ts";

export const SPEND_DAYS = 7;

/** The UTC day of `at` as instance_spend keys it: YYYY-MM-DD. */
export const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);

export interface Spend {
  today: number;
  /** Null: no daily limit. */
  limit: number | null;
  /** The last SPEND_DAYS UTC days, oldest first, today last. */
  days: { day: string; usd: number }[];
  /** Today's spend per instance. */
  byInstance: Map<string, number>;
}

export async function loadSpend(deps: Pick<Deps, "db" | "clock" | "config">, agentId: string): Promise<Spend> {
  const now = deps.clock.now();
  const days = Array.from({ length: SPEND_DAYS }, (_, i) => utcDay(now - (SPEND_DAYS - 1 - i) * DAY_MS));
  const today = days[days.length - 1]!;
  const [perDay, perInstance] = await deps.db.batch([
    deps.db
      .select({ day: instanceSpend.day, usd: sql<number>`sum(${instanceSpend.usd})` })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), gte(instanceSpend.day, days[0]!)))
      .groupBy(instanceSpend.day),
    deps.db
      .select({ instanceId: instanceSpend.instanceId, usd: instanceSpend.usd })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), eq(instanceSpend.day, today))),
  ]);
  const byDay = new Map(perDay.map((r) => [r.day, Number(r.usd)]));
  return {
    today: byDay.get(today) ?? 0,
    limit: deps.config.economics.spendLimitPerDayUsd,
    days: days.map((day) => ({ day, usd: byDay.get(day) ?? 0 })),
    byInstance: new Map(perInstance.map((r) => [r.instanceId, r.usd])),
  };
}

/** Spent today at or over the limit. */
export const overBudget = (spend: Pick<Spend, "today" | "limit">) => spend.limit !== null && spend.today >= spend.limit;
