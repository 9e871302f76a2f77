/** POST /api/cron: the cron tick on demand, the same function the scheduled tick calls. */
import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import { runCronTick } from "../../triggers/tick.ts";

export const cronRoutes = new Hono<AppEnv>().post("/cron", async (c) => c.json({ agents: await runCronTick(c.get("deps")) }));
