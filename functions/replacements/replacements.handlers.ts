/**
 * Handlers of /api/agents/:agent/replacements: the list (fleet/replacement/replacement-rows.ts) and an
 * operator's cancel (jobs/cancel-replacement.ts).
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { cancelReplacementAsOperator } from "../../jobs/cancel-replacement.ts";
import { listReplacements } from "../../fleet/replacement/replacement-rows.ts";

type Ctx = Context<AppEnv>;

export async function getReplacements(c: Ctx, agentId: string, limit: number) {
  return c.json({ replacements: await listReplacements(c.get("deps"), agentId, limit) });
}

export async function cancelReplacement(c: Ctx, agentId: string, id: number) {
  return c.json(await cancelReplacementAsOperator(c.get("deps"), c.get("operator"), agentId, id));
}
