/**
 * Read model of the provider account's credit balance (issue 33, item 7) for the overview's spend
 * panel and GET /api/agents/:agent/spend: the last good reading the tick's balance check stored
 * in `provider_balances` (fleet/economics/balance-check.ts) and the hours it lasts at the agent's burn now. Null when the
 * provider has no balance API (Lambda Cloud) or nothing was read yet.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Deps } from "../deps.ts";
import { instances, providerBalances } from "../../schema/index.ts";
import { hoursLeft } from "../../fleet/economics/balance-check.ts";
import { ratePerHour } from "../../fleet/economics/spend.ts";

export interface Balance {
  usd: number;
  /** Null: nothing burns now. */
  hoursLeft: number | null;
  /** ISO time of the reading. */
  at: string;
}

export async function loadBalance(deps: Pick<Deps, "db">, agentId: string): Promise<Balance | null> {
  const [reading] = await deps.db
    .select({ usd: providerBalances.usd, at: providerBalances.at })
    .from(providerBalances)
    .where(eq(providerBalances.agentId, agentId));
  if (!reading || reading.usd === null || reading.at === null) return null;
  const usd = reading.usd;
  const fleet = await deps.db
    .select({ state: instances.state, pricePerHour: instances.pricePerHour, storagePerHour: instances.storagePerHour })
    .from(instances)
    .where(and(eq(instances.agentId, agentId), isNull(instances.goneAt)));
  const burn = fleet.reduce((sum, row) => sum + ratePerHour(row), 0);
  const left = hoursLeft(usd, burn);
  return { usd, hoursLeft: left === null ? null : Math.round(left * 10) / 10, at: new Date(reading.at).toISOString() };
}
