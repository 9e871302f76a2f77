/** Wiring of /api/agents/:agent/actions. */
import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import { validate } from "../validate.ts";
import { agentParam } from "../agents/agents.schemas.ts";
import { loadAgent } from "../agents/load-agent.ts";
import { actionsQuery } from "./actions.schemas.ts";
import * as h from "./actions.handlers.ts";

export const actionRoutes = new Hono<AppEnv>()
  .use("/:agent/actions", validate("param", agentParam), loadAgent)
  .get("/:agent/actions", validate("query", actionsQuery), (c) => h.getActions(c, c.req.param("agent"), c.req.valid("query").limit));
