/**
 * The dashboard's session: sign-in starts a server-side session (auth/sessions-store.ts)
 * whose random id is the only thing in the cookie (HttpOnly, SameSite=Strict, Secure over https);
 * sign-out revokes it on the server, "sign out everywhere" revokes all of the operator's. Guards
 * send signed-out browsers to the sign-in page (roles are checked by auth/require-role.ts, as for
 * the API). Every signed-in form post is a cookie write, decided by the same rule as the API's
 * (auth/session-write.ts): it must come from this site's Origin and carry the session's own
 * random token, here in a hidden field, which a page on another origin can neither read nor guess.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../jobs/app-env.ts";
import { jsonError } from "../../jobs/errors.ts";
import type { Principal } from "../../auth/roles.ts";
import { CSRF_FIELD, fromOwnOrigin, refuseSessionWrite, type SessionWriteRefusal } from "../../auth/session-write.ts";
import { clearSessionCookie, requestSession, requireSession, setSessionCookie } from "../../auth/session-cookie.ts";
import { createSession, revokeAllSessions, revokeSession } from "../../auth/sessions-store.ts";

type Ctx = Context<AppEnv>;

/** The CSRF token of this request's session ("" when signed out: matches nothing). */
export async function csrfToken(c: Ctx): Promise<string> {
  return (await requestSession(c))?.csrfToken ?? "";
}

/** A new session (new id, new CSRF token) for `principal`; any session the browser held is revoked. */
export async function startSession(c: Ctx, principal: Principal, credential: string): Promise<void> {
  const { db, clock, config } = c.get("deps");
  const previous = await requestSession(c);
  if (previous) await revokeSession(db, previous.idHash, clock.now());
  const { id } = await createSession(db, principal, credential, config.session, clock.now());
  setSessionCookie(c, id, Math.floor(config.session.ttlMs / 1000));
}

/** Sign-out: revoked on the server, so a copied cookie stops working too. */
export async function endSession(c: Ctx): Promise<void> {
  const session = await requestSession(c);
  if (session) await revokeSession(c.get("deps").db, session.idHash, c.get("deps").clock.now());
  clearSessionCookie(c);
}

/** Revokes every session of the signed-in operator, on every browser. */
export async function endAllSessions(c: Ctx): Promise<number> {
  const session = await requestSession(c);
  clearSessionCookie(c);
  return session ? revokeAllSessions(c.get("deps").db, session.principal.operatorId, c.get("deps").clock.now()) : 0;
}

/** Only a local path may be a redirect target (never `//host` or a full URL). */
export function safeNext(next: unknown): string {
  return typeof next === "string" && /^\/(?![/\\])[\w\-/.?=&%]*$/.test(next) && !next.startsWith("/sign-") ? next : "/";
}

/** Pages: a signed-out browser is redirected to the sign-in page, keeping where it was going. */
export const requireOperator = requireSession((c) => {
  const url = new URL(c.req.url);
  const target = safeNext(url.pathname + url.search);
  return c.redirect(target === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(target)}`, 303);
});

/** The live-update endpoint: scripts get a 401 JSON instead of a redirect. */
export const requireOperatorJson = requireSession((c) => c.json({ error: "signed out: sign in again" }, 401));

/**
 * Every form post, sign-in too, is refused first when it does not come from this site: the origin
 * rule of cookie writes (auth/session-write.ts), checked before the session so a forged post gets
 * a 403 rather than a sign-in redirect. The answer is the one hono's csrf middleware gave here.
 */
export const sameOrigin = createMiddleware<AppEnv>(async function sameOriginMiddleware(c, next) {
  if (!fromOwnOrigin(c)) return jsonError(c, 403, ORIGIN_REFUSED);
  return next();
});

const ORIGIN_REFUSED = "request failed";
const REFUSED: Record<SessionWriteRefusal, string> = {
  origin: ORIGIN_REFUSED,
  csrf: "invalid or missing CSRF token: reload the page and try again",
};

/** Why a signed-in form post is refused as a cookie write (null: it may go on). */
export async function csrfRefusal(c: Ctx): Promise<string | null> {
  const session = await requestSession(c);
  const refusal = session ? await refuseSessionWrite(c, session, (await c.req.parseBody())[CSRF_FIELD]) : "csrf";
  return refusal ? REFUSED[refusal] : null;
}
