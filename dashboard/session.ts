/**
 * The dashboard's session: sign-in with the admin token (a cookie derived from it, HttpOnly and
 * SameSite=Strict), sign-out, the guard that sends signed-out browsers to the sign-in page, and
 * CSRF protection for every form post. Two checks guard a post: hono's origin check (the
 * request must come from this site) and a token in a hidden field, an HMAC of the session
 * cookie keyed by the admin token, which a page on another origin can neither read nor compute.
 * The sign-in form, posted before there is a session, carries a random token matched against a
 * short-lived cookie instead.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { createMiddleware } from "hono/factory";
import { timingSafeEqual } from "hono/utils/buffer";
import type { AppEnv } from "../functions/app-env.ts";
import { SESSION_COOKIE, sessionCookieValue } from "../functions/middleware/admin-auth.ts";

type Ctx = Context<AppEnv>;

export const CSRF_FIELD = "_csrf";
export const SIGN_IN_COOKIE = "fw_signin";
const SESSION_MAX_AGE_S = 7 * 24 * 3600;
const SIGN_IN_MAX_AGE_S = 30 * 60;

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

function isHttps(c: Ctx): boolean {
  return new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
}

/** The session cookie value when the browser holds a valid one, else null. */
export async function signedInSession(c: Ctx): Promise<string | null> {
  const token = c.get("deps").config.adminToken;
  const cookie = getCookie(c, SESSION_COOKIE);
  if (!token || !cookie) return null;
  const expected = await sessionCookieValue(token);
  return (await timingSafeEqual(cookie, expected)) ? expected : null;
}

/** The CSRF token of this session: HMAC-SHA256(admin token, session cookie value). */
export async function csrfToken(c: Ctx): Promise<string> {
  const adminToken = c.get("deps").config.adminToken ?? "";
  const session = adminToken ? await sessionCookieValue(adminToken) : "";
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(adminToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`fleetwarden-csrf:${session}`)));
}

export async function startSession(c: Ctx): Promise<void> {
  const token = c.get("deps").config.adminToken!;
  setCookie(c, SESSION_COOKIE, await sessionCookieValue(token), {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
    secure: isHttps(c),
    maxAge: SESSION_MAX_AGE_S,
  });
  deleteCookie(c, SIGN_IN_COOKIE, { path: "/" });
}

export function endSession(c: Ctx): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: isHttps(c) });
}

/** A fresh random token for the sign-in form, also stored in a short-lived cookie. */
export function issueSignInToken(c: Ctx): string {
  const token = hex(crypto.getRandomValues(new Uint8Array(16)).buffer);
  setCookie(c, SIGN_IN_COOKIE, token, { httpOnly: true, sameSite: "Strict", path: "/", secure: isHttps(c), maxAge: SIGN_IN_MAX_AGE_S });
  return token;
}

export async function signInTokenMatches(c: Ctx, given: string): Promise<boolean> {
  const stored = getCookie(c, SIGN_IN_COOKIE);
  return Boolean(stored && given && (await timingSafeEqual(stored, given)));
}

/** Only a local path may be a redirect target (never `//host` or a full URL). */
export function safeNext(next: unknown): string {
  return typeof next === "string" && /^\/(?![/\\])[\w\-/.?=&%]*$/.test(next) && !next.startsWith("/sign-") ? next : "/";
}

/** Pages: a signed-out browser is redirected to the sign-in page, keeping where it was going. */
export const requireOperator = createMiddleware<AppEnv>(async function requireOperatorMiddleware(c, next) {
  if (await signedInSession(c)) return next();
  const url = new URL(c.req.url);
  const target = safeNext(url.pathname + url.search);
  return c.redirect(target === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(target)}`, 303);
});

/** The live-update endpoint: scripts get a 401 JSON instead of a redirect. */
export const requireOperatorJson = createMiddleware<AppEnv>(async function requireOperatorJsonMiddleware(c, next) {
  if (await signedInSession(c)) return next();
  return c.json({ error: "signed out: sign in again" }, 401);
});

/** Same-origin check; PUBLIC_URL also counts, for hosts behind a proxy that rewrites the URL. */
export const sameOrigin = csrf({
  origin: (origin, c) => origin === new URL(c.req.url).origin || origin === publicOrigin(c as Ctx),
});

function publicOrigin(c: Ctx): string | null {
  const publicUrl = c.get("deps").config.publicUrl;
  return publicUrl ? new URL(publicUrl).origin : null;
}

/** Every signed-in form post: the hidden token must be this session's. 403 otherwise. */
export const verifyCsrf = createMiddleware<AppEnv>(async function verifyCsrfMiddleware(c, next) {
  const body = await c.req.parseBody();
  const given = body[CSRF_FIELD];
  if (typeof given !== "string" || !(await timingSafeEqual(given, await csrfToken(c)))) {
    return c.json({ error: "invalid or missing CSRF token: reload the page and try again" }, 403);
  }
  return next();
});
