/**
 * The API's description (issue #36 item 3): an OpenAPI 3.1 document built from the app's own
 * route list, not written beside it. Each /api route's method and path come from Hono's routes;
 * its role from the guards on it (`requireRole` names its role, `roleByMethod`'s default from
 * `defaultRole`, auth/require-role.ts); its path, query and body schemas from the very zod schemas
 * its `validate` middleware checks (jobs/validate.ts), converted with zod's own `z.toJSONSchema`
 * (draft 2020-12, the dialect of OpenAPI 3.1). A route added to the app is in the document at once;
 * its one-line summary comes from api-summaries.ts (test/openapi/ fails on a route without one).
 */
import { z, type ZodType } from "zod";
import { defaultRole, requiredRoleOf } from "../../auth/require-role.ts";
import { ROLES, type Role } from "../../auth/roles.ts";
import { validatesOf, type Validates } from "../validate.ts";
import { API_SUMMARIES } from "./api-summaries.ts";

/** One entry of Hono's `app.routes`: a handler or middleware registered for a method and path. */
export interface RouteEntry {
  method: string;
  path: string;
  handler: unknown;
}

export type JsonSchema = Record<string, unknown>;

export interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  "x-fleetwarden-role": Role;
  security: { bearer: [] }[];
  parameters?: { name: string; in: "path" | "query"; required: boolean; schema: JsonSchema }[];
  requestBody?: { required: boolean; content: { "application/json": { schema: JsonSchema } } };
  responses: Record<string, { description: string; content?: Record<string, { schema: JsonSchema }> }>;
}

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  jsonSchemaDialect: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: "http"; scheme: "bearer"; description: string }>;
    schemas: Record<string, JsonSchema>;
  };
}

const ERROR_REF = { $ref: "#/components/schemas/Error" };
const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: ERROR_REF } } });

/** zod → JSON Schema as a request sees it (defaults optional, coercions as their input). */
export const jsonSchemaOf = (schema: ZodType): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  return rest;
};

/** `/api/agents/:agent/runs/:runId` → `/api/agents/{agent}/runs/{runId}`. */
export const openApiPath = (honoPath: string) => honoPath.replace(/:(\w+)/g, "{$1}");

/** A `use` registration applies to a route when its path is the route's or a `/*` prefix of it. */
function covers(usePath: string, routePath: string): boolean {
  if (usePath === routePath || usePath === "*" || usePath === "/*") return true;
  if (!usePath.endsWith("/*")) return false;
  const prefix = usePath.slice(0, -2);
  return routePath === prefix || routePath.startsWith(`${prefix}/`);
}

const highest = (roles: Role[]) => roles.reduce((a, b) => (ROLES.indexOf(b) > ROLES.indexOf(a) ? b : a));

function propertiesOf(schema: ZodType): [string, JsonSchema, boolean][] {
  const json = jsonSchemaOf(schema);
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => [name, property, required.has(name)]);
}

function operationOf(method: string, path: string, checks: Validates[], role: Role): Operation {
  const key = `${method} ${path}`;
  const parameters: NonNullable<Operation["parameters"]> = [];
  const params = checks.find((v) => v.target === "param");
  const described = new Map(params ? propertiesOf(params.schema).map(([name, schema]) => [name, schema]) : []);
  for (const [, name] of path.matchAll(/:(\w+)/g))
    parameters.push({ name: name!, in: "path", required: true, schema: described.get(name!) ?? { type: "string" } });
  for (const query of checks.filter((v) => v.target === "query"))
    for (const [name, schema, required] of propertiesOf(query.schema)) parameters.push({ name, in: "query", required, schema });
  const body = checks.find((v) => v.target === "json");
  const write = method !== "GET";
  return {
    operationId: `${method.toLowerCase()}_${path.replace(/^\/api\//, "").replace(/\W+/g, "_")}`,
    summary: API_SUMMARIES[key] ?? "",
    tags: [
      path.split("/")[2] === "agents" && path.split("/").length > 4 ? (path.split("/")[4] ?? "agents") : (path.split("/")[2] ?? "api"),
    ],
    "x-fleetwarden-role": role,
    security: [{ bearer: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: { required: !body.optional, content: { "application/json": { schema: jsonSchemaOf(body.schema) } } } } : {}),
    responses: {
      "2XX": {
        description: "Success (200, or 201 created, 202 accepted): a JSON object.",
        content: { "application/json": { schema: { type: "object" } } },
      },
      ...(body || checks.length
        ? { "400": errorResponse("Invalid input: the error names the field and the problem; nothing is written.") }
        : {}),
      "401": errorResponse("No valid bearer token (or session cookie)."),
      "403": errorResponse(`The token's role is below ${role}.`),
      ...(path.includes(":") ? { "404": errorResponse("No such agent or resource.") } : {}),
      ...(write ? { "409": errorResponse("Conflict with the current state (e.g. an archived agent, a decided approval).") } : {}),
      "429": errorResponse("Too many failed authentications from this address."),
    },
  };
}

/** The MCP endpoint speaks JSON-RPC (docs/mcp.md): its answers are JSON-RPC messages, GET and DELETE are 405. */
function mcpResponses(operation: Operation, method: string): void {
  const rpc = { type: "object", properties: { jsonrpc: { const: "2.0" } }, required: ["jsonrpc"] };
  if (method !== "POST") {
    operation.responses = { "405": errorResponse("The MCP endpoint is stateless: only POST carries JSON-RPC.") };
    return;
  }
  const request = { ...rpc, properties: { ...rpc.properties, method: { type: "string" } }, required: ["jsonrpc", "method"] };
  operation.requestBody = { required: true, content: { "application/json": { schema: request } } };
  operation.responses = {
    ...operation.responses,
    "2XX": { description: "A JSON-RPC response (or 202 for a notification).", content: { "application/json": { schema: rpc } } },
    "400": { description: "A JSON-RPC error: the body is not a JSON-RPC request.", content: { "application/json": { schema: rpc } } },
    "406": {
      description: "A JSON-RPC error: the client must accept both application/json and text/event-stream (Streamable HTTP).",
      content: { "application/json": { schema: rpc } },
    },
  };
}

/** The OpenAPI 3.1 document of every /api route among `routes` (Hono's `app.routes`). */
export function buildOpenApiDocument(routes: readonly RouteEntry[]): OpenApiDocument {
  const uses = routes.filter((r) => r.method === "ALL");
  const byRoute = new Map<string, RouteEntry[]>();
  for (const route of routes) {
    if (route.method === "ALL" || !route.path.startsWith("/api/")) continue;
    const key = `${route.method} ${route.path}`;
    byRoute.set(key, [...(byRoute.get(key) ?? []), route]);
  }
  const paths: OpenApiDocument["paths"] = {};
  for (const [key, entries] of [...byRoute].sort(([a], [b]) => a.split(" ")[1]!.localeCompare(b.split(" ")[1]!) || a.localeCompare(b))) {
    const [method, path] = key.split(" ") as [string, string];
    const handlers = [...uses.filter((u) => covers(u.path, path)), ...entries].map((e) => e.handler);
    const guards = handlers.map(requiredRoleOf).filter((r): r is Role => r !== null);
    const role = highest([defaultRole(method, path), ...guards]);
    const checks = handlers.map(validatesOf).filter((v): v is Validates => v !== null);
    const operation = operationOf(method, path, checks, role);
    if (path.endsWith("/mcp")) mcpResponses(operation, method);
    (paths[openApiPath(path)] ??= {})[method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "fleetwarden API",
      version: "1",
      description: "The operator API of fleetwarden, generated from the app's routes and their zod schemas (GET /openapi.json).",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    servers: [{ url: "/" }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN or an operator's token (viewer, operator or admin)." },
      },
      schemas: {
        Error: {
          type: "object",
          properties: { error: { type: "string" } },
          required: ["error"],
          description: "Every error: what went wrong.",
        },
      },
    },
  };
}
