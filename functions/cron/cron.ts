/**
 * POST /api/cron: the cron tick on demand. By default every active agent's tick runs inline, in
 * this request, and the answer reports each one (useful for tests and operators). With
 * `?fanout=1` it does what the scheduled tick does: publishes one tick delivery per agent and
 * answers their ids.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { fanOutTick, runCronTick } from "../../jobs/tick.ts";

const cronQuery = z.object({ fanout: z.enum(["0", "1"]).default("0") });

export const cronRoutes = new Hono<AppEnv>().post("/cron", validate("query", cronQuery), async (c) =>
  c.req.valid("query").fanout === "1" ? c.json({ fannedOut: await fanOutTick(c.get("deps")) }) : c.json({ agents: await runCronTick(c.get("deps")) }),
);
