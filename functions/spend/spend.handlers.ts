/** Handler of GET /api/agents/:agent/spend: the agent's estimated spend (fleet/economics/spend.ts). */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { spendReport } from "../../fleet/economics/spend.ts";
import { loadBalance } from "../../jobs/read-models/balance.ts";

export async function getSpend(c: Context<AppEnv>, agentId: string) {
  const deps = c.get("deps");
  // The provider account's balance (null: none read, or the provider has no balance API).
  return c.json({ ...(await spendReport(deps, agentId)), balance: await loadBalance(deps, agentId) });
}
