/** Sign-in, sign-out and the signed-out redirect, through the app. */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { SESSION_COOKIE } from "../../auth/session-cookie.ts";
import { createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";
import { csrfFrom, dashboardClient, ORIGIN } from "./dashboard-client.ts";

async function signInForm(app: ReturnType<typeof buildApp>, base = ORIGIN) {
  const res = await app.request(`${base}/sign-in?next=/runs`);
  expect(res.status).toBe(200);
  const html = await res.text();
  const cookie = res.headers.get("set-cookie")?.split(";")[0] ?? "";
  return { html, cookie, token: csrfFrom(html) };
}

function postSignIn(
  app: ReturnType<typeof buildApp>,
  form: { cookie: string; token: string },
  adminToken: string,
  base = ORIGIN,
  next = "/runs",
) {
  return app.request(`${base}/sign-in`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base, Cookie: form.cookie },
    body: new URLSearchParams({ _csrf: form.token, token: adminToken, next }),
  });
}

describe("dashboard sign-in", () => {
  it("redirects a signed-out browser to the sign-in page, keeping where it was going", async () => {
    const app = buildApp(await createTestDeps().then((d) => () => d));
    const root = await app.request("/");
    expect(root.status).toBe(303);
    expect(root.headers.get("location")).toBe("/sign-in");
    const runs = await app.request("/runs/3");
    expect(runs.headers.get("location")).toBe("/sign-in?next=%2Fruns%2F3");
    const live = await app.request("/live?parts=state");
    expect(live.status).toBe(401);
  });

  it("sets an HttpOnly, SameSite=Strict session cookie for the admin token and redirects to next", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const form = await signInForm(app);
    expect(form.html).toContain('<label for="admin-token">');
    const res = await postSignIn(app, form, TEST_ADMIN_TOKEN);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/runs");
    const session = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).toMatch(/Path=\//);
    expect(session).not.toMatch(/Secure/);
    expect(session).not.toContain(TEST_ADMIN_TOKEN);
    const page = await app.request("/runs", { headers: { Cookie: session.split(";")[0]! } });
    expect(page.status).toBe(200);
  });

  it("marks the cookie Secure over https", async () => {
    const app = buildApp(await createTestDeps().then((d) => () => d));
    const form = await signInForm(app, "https://fleet.example");
    const res = await postSignIn(app, form, TEST_ADMIN_TOKEN, "https://fleet.example");
    expect(res.status).toBe(303);
    expect(res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))).toMatch(/Secure/);
  });

  it("refuses a wrong token with 401 and no session", async () => {
    const app = buildApp(await createTestDeps().then((d) => () => d));
    const form = await signInForm(app);
    const res = await postSignIn(app, form, "not-the-admin-token-at-all");
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("That token is not valid here.");
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
  });

  it("refuses a sign-in post from another origin or without the form's token", async () => {
    const app = buildApp(await createTestDeps().then((d) => () => d));
    const form = await signInForm(app);
    const crossSite = await app.request("/sign-in", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: "https://evil.example", Cookie: form.cookie },
      body: new URLSearchParams({ _csrf: form.token, token: TEST_ADMIN_TOKEN }),
    });
    expect(crossSite.status).toBe(403);
    const forged = await postSignIn(app, { cookie: form.cookie, token: "0".repeat(32) }, TEST_ADMIN_TOKEN);
    expect(forged.status).toBe(403);
    expect(forged.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
  });

  it("never redirects off-site after sign-in", async () => {
    const app = buildApp(await createTestDeps().then((d) => () => d));
    const form = await signInForm(app);
    const res = await postSignIn(app, form, TEST_ADMIN_TOKEN, ORIGIN, "//evil.example/x");
    expect(res.headers.get("location")).toBe("/");
  });

  it("signs out: the cookie is cleared and the pages redirect again", async () => {
    const client = await dashboardClient(await createTestDeps());
    const res = await client.post("/sign-out", {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/sign-in?signed-out");
    const cleared = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(cleared).toMatch(/Max-Age=0/);
    const after = await client.app.request("/", { headers: { Cookie: cleared.split(";")[0]! } });
    expect(after.status).toBe(303);
  });

  it("does not shadow the API, health or webhooks", async () => {
    const app = buildApp(await createTestDeps().then((d) => () => d));
    expect((await app.request("/healthz")).status).toBe(200);
    const unknownApi = await app.request("/api/nothing-here");
    expect(unknownApi.status).toBe(401);
    const unknown = await app.request("/no-such-page");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "not found: GET /no-such-page" });
  });
});
