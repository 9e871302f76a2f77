/**
 * The dashboard session as HTTP sees it: the cookie (HttpOnly, SameSite=Strict, Secure over
 * https, carrying only the random session id), the live session it names, and the guard that
 * requires one. What a write with the cookie must show besides is session-write.ts.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { AuthEnv } from "./auth-env.ts";
import { findSession, type LiveSession } from "./sessions-store.ts";

/**
 * Any context of the app. Every app context extends AuthEnv (jobs/app-env.ts), so reading it as
 * one is a narrowing; hono's Context is invariant in its env, hence the parameter type.
 */
type Ctx = Context;
const auth = (c: Ctx) => c as Context<AuthEnv>;

export const SESSION_COOKIE = "fw_session";

export function isHttps(c: Ctx): boolean {
  return new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
}

export function setSessionCookie(c: Ctx, id: string, maxAgeS: number): void {
  setCookie(c, SESSION_COOKIE, id, { httpOnly: true, sameSite: "Strict", path: "/", secure: isHttps(c), maxAge: maxAgeS });
}

export function clearSessionCookie(c: Ctx): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: isHttps(c) });
}

/** The live session of this request's cookie (looked up once per request), or null. */
export async function requestSession(c: Ctx): Promise<LiveSession | null> {
  const cached = auth(c).get("session");
  if (cached !== undefined) return cached;
  const deps = auth(c).get("deps");
  const session = await findSession(
    deps.db,
    getCookie(c, SESSION_COOKIE),
    { ...deps.config.session, adminToken: deps.config.adminToken },
    deps.clock.now(),
  );
  auth(c).set("session", session);
  return session;
}

/**
 * A guard for pages and scripts signed in by the cookie: the request's session must be live, and
 * its principal is who acts (as apiAuth's cookie branch sets it). `signedOut` is the answer
 * otherwise (a sign-in redirect for pages, a 401 for scripts).
 */
export function requireSession(signedOut: (c: Context<AuthEnv>) => Response | Promise<Response>) {
  return createMiddleware<AuthEnv>(async function requireSessionMiddleware(c, next) {
    const session = await requestSession(c);
    if (!session) return signedOut(c);
    c.set("operator", session.principal);
    return next();
  });
}
