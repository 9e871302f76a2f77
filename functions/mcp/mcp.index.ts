/**
 * Wiring of /api/agents/:agent/mcp, the agent's MCP server (jobs/mcp/mcp-server.ts; docs/mcp.md):
 * POST carries JSON-RPC, GET and DELETE answer 405 (stateless). Authenticated by apiAuth (a bearer
 * token; none is 401); any role may POST here (roleByMethod lets this path through at viewer, the
 * server offers the write tools to operators only). The agent is loaded by loadAgent.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { handleMcp } from "../../jobs/mcp/mcp-server.ts";

export const mcpRoutes = new Hono<AppEnv>().on(["GET", "POST", "DELETE"], "/:agent/mcp", (c) =>
  handleMcp({ deps: c.get("deps"), agent: c.get("agent"), who: c.get("operator")!, request: c.req.raw }),
);
