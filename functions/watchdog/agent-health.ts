/**
 * GET /api/agents/:agent/health — the loop watchdog's open conditions for one agent, as of the
 * last cron tick: `{ok, conditions:[{kind, since, detail}]}`; ok is true when none is open.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { readHealth } from "../../agent/watchdog/watchdog.ts";

export const agentHealthRoutes = new Hono<AppEnv>().get("/:agent/health", async (c) => c.json(await readHealth(c.get("deps"), c.req.param("agent"))));
