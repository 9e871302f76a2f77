/**
 * The one rule for a write authenticated by the dashboard's session cookie, whether it reaches the
 * API (token in `X-CSRF-Token`) or a dashboard form post (token in the hidden `_csrf` field). The
 * cookie is ambient: a browser sends it with requests other pages make (SameSite=Strict still lets
 * a page on another port of the same host send it), so such a write is accepted only when it
 * comes from a page of this site (its Origin) and carries this session's random CSRF token, which
 * a page elsewhere can neither read nor guess. A bearer token is not ambient and needs neither.
 */
import type { Context } from "hono";
import type { AuthEnv } from "./auth-env.ts";
import { sameSecret } from "./secrets.ts";
import type { LiveSession } from "./sessions-store.ts";

/** Any context of the app (every app context extends AuthEnv; hono's Context is invariant in its env). */
type Ctx = Context;

export const CSRF_HEADER = "X-CSRF-Token";
export const CSRF_FIELD = "_csrf";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Whether a request of this method may write (everything but GET, HEAD and OPTIONS). */
export const isWriteMethod = (method: string) => !SAFE_METHODS.has(method);

/**
 * The request came from a page of this site: its Origin is this URL's origin or PUBLIC_URL's (for
 * hosts behind a proxy that rewrites the URL). No Origin is not ours: browsers send it with every
 * POST, so only a non-browser client omits it, and such a client has a bearer token to use.
 * An `Origin: null` is never ours.
 */
export function fromOwnOrigin(c: Ctx): boolean {
  const origin = c.req.header("Origin");
  // `null` is the origin of a sandboxed or opaque page, never of this site: it matches nothing,
  // even a PUBLIC_URL whose own origin is `null` (config refuses one; this holds without it too).
  if (!origin || origin === "null") return false;
  const publicUrl = (c as Context<AuthEnv>).get("deps").config.publicUrl;
  return origin === new URL(c.req.url).origin || (publicUrl !== undefined && origin === new URL(publicUrl).origin);
}

/** Why a cookie-authenticated write is refused: not from this site, or without the session's token. */
export type SessionWriteRefusal = "origin" | "csrf";

/**
 * Decides a cookie-authenticated write of `session`: null when it comes from this site's Origin and
 * `givenToken` is the session's CSRF token (compared in constant time), else why not. Each caller
 * answers a refusal in its own format (API JSON, dashboard JSON), with a 403 and nothing run.
 */
export async function refuseSessionWrite(c: Ctx, session: LiveSession, givenToken: unknown): Promise<SessionWriteRefusal | null> {
  if (!fromOwnOrigin(c)) return "origin";
  if (typeof givenToken !== "string" || !(await sameSecret(givenToken, session.csrfToken))) return "csrf";
  return null;
}
