/**
 * Authentication of /api/*. A bearer token (ADMIN_TOKEN or an operator's token) is the API's
 * credential. The dashboard's session cookie is accepted too, but it is ambient (a browser sends
 * it with requests other sites make), so with a cookie only safe methods pass on their own; a
 * write must pass the dashboard forms' own rule (session-write.ts: this site's Origin and the
 * session's CSRF token, here in `X-CSRF-Token`), or it is 403 and nothing runs. Wrong bearer
 * tokens count toward throttling (throttle.ts): an address's lockout refuses before the token is
 * checked, the global one only a token that failed.
 */
import { createMiddleware } from "hono/factory";
import type { AuthEnv } from "./auth-env.ts";
import { jsonError } from "../runtime/errors.ts";
import { authenticateToken } from "./authenticate-token.ts";
import { requestSession } from "./session-cookie.ts";
import { CSRF_HEADER, isWriteMethod, refuseSessionWrite, type SessionWriteRefusal } from "./session-write.ts";
import { clientAddress, currentLockout, tooManyAttempts } from "./throttle.ts";

const SESSION_WRITE_REFUSED: Record<SessionWriteRefusal, string> = {
  origin: "cookie-authenticated writes must come from this site (Origin); use a bearer token",
  csrf: `cookie-authenticated writes need this session's ${CSRF_HEADER}; use a bearer token`,
};

export const apiAuth = createMiddleware<AuthEnv>(async function apiAuthMiddleware(c, next) {
  const deps = c.get("deps");
  const header = c.req.header("Authorization");
  if (header !== undefined) {
    const address = clientAddress(c, deps.config.trustProxyHeader);
    const lockout = await currentLockout(deps, address);
    if (lockout?.scope === "address") return tooManyAttempts(c, lockout);
    const bearer = header.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    const principal = await authenticateToken(deps, address, bearer, "bearer");
    // The global lockout refuses only what failed: a valid token from a fresh address always passes.
    if (!principal) return lockout ? tooManyAttempts(c, lockout) : jsonError(c, 401, "invalid token");
    c.set("operator", principal);
    return next();
  }
  const session = await requestSession(c);
  if (!session) return jsonError(c, 401, "missing Authorization: Bearer <token>");
  const refusal = !isWriteMethod(c.req.method) ? null : await refuseSessionWrite(c, session, c.req.header(CSRF_HEADER));
  if (refusal) return jsonError(c, 403, SESSION_WRITE_REFUSED[refusal]);
  c.set("operator", session.principal);
  return next();
});
