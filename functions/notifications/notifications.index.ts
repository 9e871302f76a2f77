/** Wiring of /api/agents/:agent/notifications. */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { notificationsQuery } from "./notifications.schemas.ts";
import * as h from "./notifications.handlers.ts";

export const notificationRoutes = new Hono<AppEnv>().get("/:agent/notifications", validate("query", notificationsQuery), (c) =>
  h.getNotifications(c, c.req.param("agent"), c.req.valid("query").limit),
);
