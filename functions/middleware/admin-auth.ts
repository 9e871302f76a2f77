/**
 * Operator authentication: `Authorization: Bearer $ADMIN_TOKEN`, or the dashboard's session
 * cookie, compared in constant time. Anything else is a 401 JSON.
 */
import { createMiddleware } from "hono/factory";
import { getCookie } from "hono/cookie";
import { timingSafeEqual } from "hono/utils/buffer";
import type { AppEnv } from "../app-env.ts";
import { jsonError } from "../errors.ts";

export const SESSION_COOKIE = "fw_session";

/**
 * The dashboard cookie's value: derived from the admin token, so the token itself never sits in
 * a cookie, and rotating the token signs every browser out.
 */
export async function sessionCookieValue(adminToken: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`fleetwarden-session:${adminToken}`));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** True when `given` is the admin token; constant time whatever the lengths. */
export async function isAdminToken(given: string | undefined, adminToken: string | undefined): Promise<boolean> {
  if (!given || !adminToken) return false;
  return timingSafeEqual(given, adminToken);
}

export function adminAuth(options: { allowCookie?: boolean } = {}) {
  const allowCookie = options.allowCookie ?? true;
  return createMiddleware<AppEnv>(async function adminAuthMiddleware(c, next) {
    const token = c.get("deps").config.adminToken;
    const header = c.req.header("Authorization");
    const bearer = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    const cookie = allowCookie ? getCookie(c, SESSION_COOKIE) : undefined;
    if (await isAdminToken(bearer, token)) return next();
    if (cookie && token && (await timingSafeEqual(cookie, await sessionCookieValue(token)))) return next();
    return jsonError(c, 401, header ? "invalid admin token" : "missing Authorization: Bearer <ADMIN_TOKEN>");
  });
}
