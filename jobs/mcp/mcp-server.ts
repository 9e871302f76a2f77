/**
 * The MCP server (issue #35, item 1): POST /api/agents/:agent/mcp speaks the Model Context
 * Protocol's Streamable HTTP transport (JSON-RPC 2.0; protocol 2025-06-18 and the SDK's other
 * versions) through the official SDK's web-standard transport, so it runs unchanged on Node and
 * on Workers (JSON Schema validated by @cfworker/json-schema, no code generation). Stateless: each
 * POST gets its own server and transport, and answers with JSON (no stream is left open); GET and
 * DELETE answer 405, which the spec allows a server without a stream to offer.
 *
 * Who calls: the operator of the bearer token (auth/api-auth.ts; no token is a 401 before this),
 * whose role decides the tools offered: a viewer the read tools only, an operator and an admin
 * the write tools too. Which client: the initialize request's clientInfo.name, carried by the
 * session id this server hands out on initialize (`fw1.<base64url name>`, which the client sends
 * back on every later request); a request without it is attributed to client "mcp". The name is
 * the client's own word: it attributes, it grants nothing.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { hasRole, type Principal } from "../../auth/roles.ts";
import type { AgentRow } from "../../pipeline/index.ts";
import type { Deps } from "../deps.ts";
import { registerLeaseTools } from "./lease-tools.ts";
import { registerReadTools } from "./read-tools.ts";

const SESSION_PREFIX = "fw1.";
const SESSION_HEADER = "mcp-session-id";
/** Longest client name kept (clientInfo.name is free text). */
const CLIENT_NAME_MAX = 100;

const encode = (s: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(s)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const decode = (s: string) =>
  new TextDecoder().decode(Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0)));

/** The session id that carries the client's name. */
export function sessionFor(client: string): string {
  return `${SESSION_PREFIX}${encode(client)}`;
}

/** The client's name from a session id this server handed out, or null. */
export function clientOfSession(session: string | null): string | null {
  if (!session?.startsWith(SESSION_PREFIX)) return null;
  try {
    return cleanName(decode(session.slice(SESSION_PREFIX.length)));
  } catch {
    return null;
  }
}

function cleanName(name: unknown): string | null {
  if (typeof name !== "string") return null;
  const clean = name
    .replace(/[^\x20-\x7e]/g, "")
    .trim()
    .slice(0, CLIENT_NAME_MAX);
  return clean || null;
}

/** The clientInfo name of an initialize request in the body (a single message or a batch), or null. */
function initializeClient(body: unknown): string | null | undefined {
  const messages = Array.isArray(body) ? body : [body];
  const init = messages.find((m) => m && typeof m === "object" && (m as { method?: unknown }).method === "initialize") as
    | { params?: { clientInfo?: { name?: unknown } } }
    | undefined;
  if (!init) return undefined;
  return cleanName(init.params?.clientInfo?.name);
}

const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

export interface McpRequest {
  deps: Deps;
  agent: AgentRow;
  who: Principal;
  request: Request;
}

/** Answers one HTTP request to the MCP endpoint. */
export async function handleMcp({ deps, agent, who, request }: McpRequest): Promise<Response> {
  if (request.method !== "POST")
    return jsonRpcError(405, -32000, "Method not allowed: this MCP server is stateless and answers POST only", { allow: "POST" });
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return jsonRpcError(400, -32700, "Parse error: the body is not JSON");
  }
  const initializing = initializeClient(body);
  const client = (initializing === undefined ? clientOfSession(request.headers.get(SESSION_HEADER)) : initializing) ?? "mcp";

  const server = new McpServer(
    { name: "fleetwarden", version: "0.1.0" },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      instructions:
        "fleetwarden rents and watches GPU instances for this agent. Rent with rent_instance (a lease and a purpose), extend_lease while you work, release_instance when done. Approvals, budgets and limits apply.",
    },
  );
  const caller = { deps, agentId: agent.id, agent, who, client };
  registerReadTools(server, caller);
  if (hasRole(who, "operator")) registerLeaseTools(server, caller);

  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(request, { parsedBody: body });
    if (initializing === undefined || !response.ok) return response;
    // The client sends this back on every later request: how its name reaches the tools it calls.
    const headers = new Headers(response.headers);
    headers.set(SESSION_HEADER, sessionFor(client));
    return new Response(response.body, { status: response.status, headers });
  } finally {
    await server.close();
  }
}
