/** Handlers of /api/agents/:agent/actions: the audit of every provider action, newest first. */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listActions } from "../../fleet/actions.ts";

export async function getActions(c: Context<AppEnv>, agentId: string, limit: number) {
  return c.json({ actions: await listActions(c.get("deps"), agentId, limit) });
}
