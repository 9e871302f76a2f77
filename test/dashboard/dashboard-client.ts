/**
 * A signed-in dashboard client for tests: the app over `app.request`, the session cookie the
 * sign-in sets, and the CSRF token read from a rendered page, as a browser would.
 */
import { buildApp } from "../../functions/app.ts";
import { SESSION_COOKIE, sessionCookieValue } from "../../functions/middleware/admin-auth.ts";
import type { Deps } from "../../runtime/deps.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

export const ORIGIN = "http://localhost";

export function csrfFrom(html: string): string {
  const token = html.match(/name="_csrf" value="([^"]+)"/)?.[1];
  if (!token) throw new Error("page has no CSRF field");
  return token;
}

export async function dashboardClient(deps: Deps) {
  const app = buildApp(() => deps);
  const cookie = `${SESSION_COOKIE}=${await sessionCookieValue(TEST_ADMIN_TOKEN)}`;
  const get = (path: string) => app.request(path, { headers: { Cookie: cookie } });
  const page = async (path: string) => {
    const res = await get(path);
    return { status: res.status, html: await res.text(), res };
  };
  const csrf = csrfFrom((await page("/")).html);
  const post = (path: string, fields: Record<string, string>, options: { origin?: string | null; cookie?: string | null; csrf?: string | null } = {}) => {
    const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
    const origin = options.origin === undefined ? ORIGIN : options.origin;
    if (origin) headers.Origin = origin;
    const sentCookie = options.cookie === undefined ? cookie : options.cookie;
    if (sentCookie) headers.Cookie = sentCookie;
    const token = options.csrf === undefined ? csrf : options.csrf;
    const body = new URLSearchParams(token === null ? fields : { ...fields, _csrf: token });
    return app.request(path, { method: "POST", headers, body });
  };
  return { app, cookie, csrf, get, page, post };
}
