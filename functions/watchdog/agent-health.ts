/**
 * GET /api/agents/:agent/health — the loop watchdog's open conditions for one agent, as of the
 * last cron tick, and its own LLM now: `{ok, conditions:[{kind, since, detail}], llm}`; ok is
 * true when no condition is open; llm is null without one (jobs/read-models/agent-health.ts).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { loadAgentHealth } from "../../jobs/read-models/agent-health.ts";

export const agentHealthRoutes = new Hono<AppEnv>().get("/:agent/health", async (c) =>
  c.json(await loadAgentHealth(c.get("deps"), c.req.param("agent"))),
);
