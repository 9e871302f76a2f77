/**
 * Who is calling the MCP server, as every tool sees it: the agent's scoped deps, the operator the
 * bearer token names, and the MCP client acting for them (its initialize clientInfo name). Its own
 * module so the server and its tool groups share it without importing each other.
 */
import type { Principal } from "../../auth/roles.ts";
import type { AgentRow } from "../../pipeline/index.ts";
import type { Deps } from "../deps.ts";

export interface McpCaller {
  deps: Deps;
  agentId: string;
  agent: AgentRow;
  who: Principal;
  /** The MCP client's name (clientInfo.name at initialize), or "mcp" when it never said. */
  client: string;
}
