/**
 * Authentication of /api/*. A bearer token (ADMIN_TOKEN or an operator's token) is the API's
 * credential. The dashboard's session cookie is accepted too, but it is ambient (a browser sends
 * it with requests other sites make), so with a cookie only safe methods pass on their own; a
 * write must also come from this site's Origin and carry the session's CSRF token in
 * `X-CSRF-Token`, or it is 403 and nothing runs. Wrong bearer tokens count toward throttling.
 */
import { createMiddleware } from "hono/factory";
import type { AuthEnv } from "./auth-env.ts";
import { jsonError } from "../runtime/errors.ts";
import { principalForToken } from "./operators-store.ts";
import { sameSecret } from "./secrets.ts";
import { fromOwnOrigin, requestSession } from "./session-cookie.ts";
import { clientAddress, currentLockout, recordAuthFailure, tooManyAttempts } from "./throttle.ts";

export const CSRF_HEADER = "X-CSRF-Token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export const apiAuth = createMiddleware<AuthEnv>(async function apiAuthMiddleware(c, next) {
  const deps = c.get("deps");
  const header = c.req.header("Authorization");
  if (header !== undefined) {
    const address = clientAddress(c);
    const lockout = await currentLockout(deps, address);
    if (lockout) return tooManyAttempts(c, lockout);
    const bearer = header.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    const principal = bearer ? await principalForToken(deps.db, deps.config.adminToken, bearer) : null;
    if (!principal) {
      await recordAuthFailure(deps, address, "bearer");
      return jsonError(c, 401, "invalid token");
    }
    c.set("operator", principal);
    return next();
  }
  const session = await requestSession(c);
  if (!session) return jsonError(c, 401, "missing Authorization: Bearer <token>");
  if (!SAFE_METHODS.has(c.req.method)) {
    if (!fromOwnOrigin(c)) return jsonError(c, 403, "cookie-authenticated writes must come from this site (Origin); use a bearer token");
    if (!(await sameSecret(c.req.header(CSRF_HEADER), session.csrfToken))) {
      return jsonError(c, 403, `cookie-authenticated writes need this session's ${CSRF_HEADER}; use a bearer token`);
    }
  }
  c.set("operator", session.principal);
  return next();
});
