/** Handlers of /api/agents/:agent/notifications: the stored notifications and their channel outcomes. */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listNotifications } from "../../notify/list-notifications.ts";

export async function getNotifications(c: Context<AppEnv>, agentId: string, limit: number) {
  return c.json({ notifications: await listNotifications(c.get("deps"), agentId, limit) });
}
