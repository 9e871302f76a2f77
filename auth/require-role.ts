/**
 * Role guards, the one role check of the app: the API's routes and the dashboard's pages and
 * posts all refuse through `requireRole` (403 naming the role needed and the principal's), and
 * decide with `hasRole` (auth/roles.ts). `roleByMethod` is the API's default: reading needs
 * viewer, anything that writes needs operator.
 */
import { createMiddleware } from "hono/factory";
import type { AuthEnv } from "./auth-env.ts";
import { jsonError } from "../runtime/errors.ts";
import { hasRole, type Role } from "./roles.ts";
import { isWriteMethod } from "./session-write.ts";

export function requireRole(role: Role) {
  const guard = createMiddleware<AuthEnv>(async function requireRoleMiddleware(c, next) {
    const who = c.get("operator");
    if (!who || !hasRole(who, role)) {
      return jsonError(c, 403, `forbidden: this needs the ${role} role${who ? ` (${who.name} is ${who.role})` : ""}`);
    }
    return next();
  });
  // The guard names its role, so the API's own description (jobs/openapi/) reads it off the route.
  return Object.assign(guard, { requiredRole: role });
}

/** The role a guard installed by `requireRole` checks, or null for any other handler. */
export const requiredRoleOf = (handler: unknown): Role | null =>
  typeof handler === "function" && "requiredRole" in handler ? (handler.requiredRole as Role) : null;

const viewer = requireRole("viewer");
const operator = requireRole("operator");

/** The MCP endpoint: every POST is JSON-RPC, reads included; its server offers each role its tools (jobs/mcp/mcp-server.ts). */
const MCP_PATH = /^\/api\/agents\/[^/]+\/mcp$/;

/** The API's default role for a request: viewer for reads and for the MCP endpoint, operator for other writes. */
export const defaultRole = (method: string, path: string): Role => (MCP_PATH.test(path) || !isWriteMethod(method) ? "viewer" : "operator");

export const roleByMethod = createMiddleware<AuthEnv>(async function roleByMethodMiddleware(c, next) {
  return (defaultRole(c.req.method, c.req.path) === "viewer" ? viewer : operator)(c, next);
});
