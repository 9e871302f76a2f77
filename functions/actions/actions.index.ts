/** Wiring of /api/agents/:agent/actions. */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { actionsQuery } from "./actions.schemas.ts";
import * as h from "./actions.handlers.ts";

export const actionRoutes = new Hono<AppEnv>().get("/:agent/actions", validate("query", actionsQuery), (c) =>
  h.getActions(c, c.req.param("agent"), c.req.valid("query")),
);
