/**
 * Wiring of /api/agents/:agent/mode: GET (viewer) answers act or shadow; POST {mode} (operator,
 * the API's default for writes) switches it, the one-call pause.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { modeBody } from "../../jobs/agent-mode.ts";
import * as h from "./mode.handlers.ts";

export const modeRoutes = new Hono<AppEnv>()
  .get("/:agent/mode", (c) => h.getMode(c, c.req.param("agent")))
  .post("/:agent/mode", validate("json", modeBody), (c) => h.postMode(c, c.req.param("agent"), c.req.valid("json")));
