/** Answers 404 for an agent id that does not exist, before any handler runs. */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env.ts";
import { findAgent } from "../../triggers/agents.ts";
import { jsonError } from "../errors.ts";

export const loadAgent = createMiddleware<AppEnv>(async function loadAgentMiddleware(c, next) {
  const agentId = c.req.param("agent");
  if (!agentId || !(await findAgent(c.get("deps").db, agentId))) return jsonError(c, 404, `unknown agent: ${agentId}`);
  await next();
});
