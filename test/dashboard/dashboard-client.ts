/**
 * A signed-in dashboard client for tests: the app over `app.request`, the session cookie the
 * sign-in form sets, and the CSRF token read from a rendered page, as a browser would.
 */
import { buildApp } from "../../functions/app.ts";
import { SESSION_COOKIE } from "../../auth/session-cookie.ts";
import type { Deps } from "../../jobs/deps.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

export const ORIGIN = "http://localhost";

export function csrfFrom(html: string): string {
  const token = html.match(/name="_csrf" value="([^"]+)"/)?.[1];
  if (!token) throw new Error("page has no CSRF field");
  return token;
}

/** Signs in through the sign-in form; returns the `name=value` session cookie. */
export async function signInCookie(app: ReturnType<typeof buildApp>, token: string): Promise<string> {
  const form = await app.request(`${ORIGIN}/sign-in`);
  const res = await app.request(`${ORIGIN}/sign-in`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
    body: new URLSearchParams({ _csrf: csrfFrom(await form.text()), token, next: "/" }),
  });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (res.status !== 303 || !cookie) throw new Error(`sign-in failed with ${res.status}`);
  return cookie.split(";")[0]!;
}

export async function dashboardClient(deps: Deps, token = TEST_ADMIN_TOKEN) {
  const app = buildApp(() => deps);
  const cookie = await signInCookie(app, token);
  const get = (path: string) => app.request(path, { headers: { Cookie: cookie } });
  const page = async (path: string) => {
    const res = await get(path);
    return { status: res.status, html: await res.text(), res };
  };
  const csrf = csrfFrom((await page("/")).html);
  const post = (
    path: string,
    fields: Record<string, string>,
    options: { origin?: string | null; cookie?: string | null; csrf?: string | null } = {},
  ) => {
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
