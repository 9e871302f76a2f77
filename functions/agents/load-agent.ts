/**
 * Scopes every /api/agents/:agent route, whichever route group serves it: a malformed agent id
 * is a 400 and an agent that does not exist a 404, before any handler runs. The request's deps
 * become the agent's (its settings applied, jobs/with-agent.ts), and an archived agent
 * refuses anything that would start work (POST: 409, except restoring it); reading its history
 * still works.
 * Mounted once, in functions/app.ts.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../jobs/app-env.ts";
import { findAgentRecent } from "../../pipeline/index.ts";
import { scopeToAgent } from "../../jobs/with-agent.ts";
import { jsonError } from "../../jobs/errors.ts";
import { AGENT_ID, AGENT_ID_RULE } from "../../jobs/agent-requests.ts";

export const loadAgent = createMiddleware<AppEnv>(async function loadAgentMiddleware(c, next) {
  // The same rule as agentParam, tested directly: this runs before every /api/agents/:agent request.
  const agentId = c.req.param("agent") ?? "";
  if (!AGENT_ID.test(agentId)) return jsonError(c, 400, `invalid param: agent: ${AGENT_ID_RULE}`);
  const agent = await findAgentRecent(c.get("deps").db, agentId, c.get("deps").clock.now());
  if (!agent) return jsonError(c, 404, `unknown agent: ${agentId}`);
  const scope = scopeToAgent(c.get("deps"), agent);
  if (scope.archived && c.req.method === "POST" && c.req.path !== `/api/agents/${agentId}/restore`)
    return jsonError(c, 409, `agent ${agentId} is archived`);
  c.set("agent", agent);
  c.set("deps", scope.deps);
  await next();
});
