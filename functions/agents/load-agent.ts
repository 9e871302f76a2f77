/**
 * Scopes every /api/agents/:agent route, whichever route group serves it: a malformed agent id
 * is a 400 and an agent that does not exist a 404, before any handler runs. Mounted once, in
 * functions/app.ts.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env.ts";
import { agentExists } from "../../triggers/agents.ts";
import { jsonError } from "../errors.ts";
import { agentParam } from "./agents.schemas.ts";

export const loadAgent = createMiddleware<AppEnv>(async function loadAgentMiddleware(c, next) {
  const parsed = agentParam.safeParse({ agent: c.req.param("agent") });
  if (!parsed.success) return jsonError(c, 400, `invalid param: agent: ${parsed.error.issues[0]!.message}`);
  const agentId = parsed.data.agent;
  if (!(await agentExists(c.get("deps").db, agentId))) return jsonError(c, 404, `unknown agent: ${agentId}`);
  await next();
});
