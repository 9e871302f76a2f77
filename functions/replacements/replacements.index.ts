/**
 * Wiring of /api/agents/:agent/replacements: the agent's replacements, newest first (GET), and
 * an operator cancelling one that has not rented yet (POST …/:id/cancel).
 */
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { validate } from "../../jobs/validate.ts";
import { agentParam } from "../../jobs/agent-requests.ts";
import * as h from "./replacements.handlers.ts";

const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });
const replacementParam = agentParam.extend({ id: z.coerce.number().int().positive() });

export const replacementRoutes = new Hono<AppEnv>()
  .get("/:agent/replacements", validate("query", listQuery), (c) => h.getReplacements(c, c.req.param("agent"), c.req.valid("query").limit))
  .post("/:agent/replacements/:id/cancel", validate("param", replacementParam), (c) =>
    h.cancelReplacement(c, c.req.param("agent"), c.req.valid("param").id),
  );
