/** Handler of GET /api/agents/:agent/spend: the agent's estimated spend (fleet/economics/spend.ts). */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { spendReport } from "../../fleet/economics/spend.ts";

export async function getSpend(c: Context<AppEnv>, agentId: string) {
  return c.json(await spendReport(c.get("deps"), agentId));
}
