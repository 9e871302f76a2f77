/**
 * Server-side dashboard sessions: a new random id on every sign-in, revoked on the server by
 * sign-out (a copied cookie stops working), "sign out everywhere", absolute and idle expiry
 * enforced by the server, a per-session CSRF token, and a single-use server-issued sign-in token.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { operatorSessions } from "../../schema/index.ts";
import { csrfFrom, dashboardClient, ORIGIN, signInCookie } from "../dashboard/dashboard-client.ts";
import { createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

const HOUR = 3600_000;

async function status(app: ReturnType<typeof buildApp>, cookie: string, path = "/runs") {
  return (await app.request(`${ORIGIN}${path}`, { headers: { Cookie: cookie } })).status;
}

describe("dashboard sessions", () => {
  it("gives every sign-in a new random id and its own CSRF token; the database holds only hashes", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const a = await signInCookie(app, TEST_ADMIN_TOKEN);
    const b = await signInCookie(app, TEST_ADMIN_TOKEN);
    expect(a).not.toBe(b);
    expect(a.split("=")[1]).toMatch(/^[0-9a-f]{64}$/);
    const csrfA = csrfFrom(await (await app.request(`${ORIGIN}/`, { headers: { Cookie: a } })).text());
    const csrfB = csrfFrom(await (await app.request(`${ORIGIN}/`, { headers: { Cookie: b } })).text());
    expect(csrfA).not.toBe(csrfB);
    const rows = await deps.db.select().from(operatorSessions);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect([a.split("=")[1], b.split("=")[1]]).not.toContain(row.idHash);
      expect(row).toMatchObject({ operatorId: 0, revokedAt: null, expiresAt: deps.clock.now() + 7 * 24 * HOUR });
    }
  });

  it("sign-out revokes the session on the server: a copy of the cookie no longer works", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    expect(await status(client.app, client.cookie)).toBe(200);
    expect((await client.post("/sign-out", {})).status).toBe(303);
    expect(await status(client.app, client.cookie)).toBe(303);
    expect((await client.app.request("/api/agents/default", { headers: { Cookie: client.cookie } })).status).toBe(401);
    const [row] = await deps.db.select().from(operatorSessions);
    expect(row!.revokedAt).toBe(deps.clock.now());
  });

  it("sign out everywhere revokes every session of that operator and no one else's", async () => {
    const deps = await createTestDeps();
    const { token } = await createOperator(deps.db, { name: "ana", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const first = await dashboardClient(deps, token);
    const second = await signInCookie(first.app, token);
    const admin = await signInCookie(first.app, TEST_ADMIN_TOKEN);
    expect((await first.post("/sign-out-everywhere", {})).status).toBe(303);
    expect(await status(first.app, first.cookie)).toBe(303);
    expect(await status(first.app, second)).toBe(303);
    expect(await status(first.app, admin)).toBe(200);
  });

  it("enforces SESSION_TTL_S even for a session in constant use", async () => {
    const deps = await createTestDeps({ vars: { SESSION_TTL_S: String(3 * 3600) } });
    const client = await dashboardClient(deps);
    for (let hour = 0; hour < 2; hour++) {
      deps.clock.advance(HOUR);
      expect(await status(client.app, client.cookie)).toBe(200);
    }
    deps.clock.advance(HOUR);
    expect(await status(client.app, client.cookie)).toBe(303);
  });

  it("ends a session left idle longer than SESSION_IDLE_TIMEOUT_S", async () => {
    const deps = await createTestDeps({ vars: { SESSION_IDLE_TIMEOUT_S: "1800" } });
    const client = await dashboardClient(deps);
    deps.clock.advance(1700_000);
    expect(await status(client.app, client.cookie)).toBe(200);
    deps.clock.advance(1700_000);
    expect(await status(client.app, client.cookie)).toBe(200);
    deps.clock.advance(1801_000);
    expect(await status(client.app, client.cookie)).toBe(303);
  });

  it("the sign-in form's token is the server's and works once; a made-up one matches nothing", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const token = csrfFrom(await (await app.request(`${ORIGIN}/sign-in`)).text());
    const post = (formToken: string) =>
      app.request(`${ORIGIN}/sign-in`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
        body: new URLSearchParams({ _csrf: formToken, token: TEST_ADMIN_TOKEN }),
      });
    expect((await post("a".repeat(64))).status).toBe(403);
    expect((await post(token)).status).toBe(303);
    expect((await post(token)).status).toBe(403);
    const expired = csrfFrom(await (await app.request(`${ORIGIN}/sign-in`)).text());
    deps.clock.advance(31 * 60_000);
    expect((await post(expired)).status).toBe(403);
  });

  it("revoking an operator ends its sessions and its bearer token", async () => {
    const deps = await createTestDeps();
    const { token, operator } = await createOperator(deps.db, { name: "bo", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const client = await dashboardClient(deps, token);
    const bearer = { Authorization: `Bearer ${token}` };
    expect((await client.app.request("/api/agents/default", { headers: bearer })).status).toBe(200);
    const res = await client.app.request(`/api/operators/${operator.id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(await status(client.app, client.cookie)).toBe(303);
    expect((await client.app.request("/api/agents/default", { headers: bearer })).status).toBe(401);
  });
});

describe("rotating ADMIN_TOKEN", () => {
  it("ends the bootstrap admin's sessions but not other operators'", async () => {
    const deps = await createTestDeps();
    const { token } = await createOperator(deps.db, { name: "cy", role: "viewer", createdBy: "admin", now: deps.clock.now() });
    const app = buildApp(() => deps);
    const admin = await signInCookie(app, TEST_ADMIN_TOKEN);
    const viewer = await signInCookie(app, token);
    const rotated = buildApp(() => ({ ...deps, config: { ...deps.config, adminToken: "a-brand-new-admin-token-987654" } }));
    expect(await status(rotated, admin)).toBe(303);
    expect(await status(rotated, viewer)).toBe(200);
    expect(await status(app, admin)).toBe(200);
  });
});
