/**
 * The dashboard session as HTTP sees it: the cookie (HttpOnly, SameSite=Strict, Secure over
 * https, carrying only the random session id), the live session it names, and the origin check
 * shared by dashboard forms and cookie-authenticated API writes.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../app-env.ts";
import { findSession, type LiveSession } from "./sessions-store.ts";

type Ctx = Context<AppEnv>;

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
  const cached = c.get("session");
  if (cached !== undefined) return cached;
  const deps = c.get("deps");
  const session = await findSession(
    deps.db,
    getCookie(c, SESSION_COOKIE),
    { ...deps.config.session, adminToken: deps.config.adminToken },
    deps.clock.now(),
  );
  c.set("session", session);
  return session;
}

/** The request came from a page of this site: its Origin is this URL's origin or PUBLIC_URL's. */
export function fromOwnOrigin(c: Ctx): boolean {
  const origin = c.req.header("Origin");
  if (!origin) return false;
  const publicUrl = c.get("deps").config.publicUrl;
  return origin === new URL(c.req.url).origin || (publicUrl !== undefined && origin === new URL(publicUrl).origin);
}
