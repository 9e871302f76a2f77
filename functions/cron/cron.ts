/**
 * POST /api/cron: the cron tick on demand. By default every active agent's tick runs inline, in
 * this request, and the answer reports each one (useful for tests and operators). With
 * `?fanout=1` it does what the scheduled tick does (jobs/scheduled-tick.ts): ticks up to
 * CRON_INLINE_AGENTS agents here, publishes a tick delivery for the due agents left over, performs
 * due runs itself while the scheduler refuses publishes, and answers what it did.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";

const cronQuery = z.object({ fanout: z.enum(["0", "1"]).default("0") });

export const cronRoutes = new Hono<AppEnv>().post("/cron", validate("query", cronQuery), async (c) =>
  c.req.valid("query").fanout === "1"
    ? c.json(await runScheduledTick(c.get("deps")))
    : c.json({ agents: await runCronTick(c.get("deps")) }),
);
