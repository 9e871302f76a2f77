/** Handlers of /api/agents/:agent/notifications: the stored notifications and their channel outcomes (error bodies for admins only). */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listNotifications } from "../../notify/list-notifications.ts";
import { hasRole } from "../../auth/roles.ts";

export async function getNotifications(c: Context<AppEnv>, agentId: string, limit: number) {
  return c.json({
    notifications: await listNotifications(c.get("deps"), agentId, limit, { withErrors: hasRole(c.get("operator"), "admin") }),
  });
}
