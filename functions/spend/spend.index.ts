/** Wiring of GET /api/agents/:agent/spend (viewer role; the agent id is checked by loadAgent). */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import * as h from "./spend.handlers.ts";

export const spendRoutes = new Hono<AppEnv>().get("/:agent/spend", (c) => h.getSpend(c, c.req.param("agent")));
