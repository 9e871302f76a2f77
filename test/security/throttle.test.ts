/**
 * Throttling of failed authentications, per client address (IPv6 per /64) and globally, stored
 * in the database: past an address's limit every attempt from it (even with the right token) is
 * 429 with Retry-After, past the global one only failed credentials are (issue #25: no client can
 * lock every operator out), a backward wall-clock step extends no lockout,
 * a second app on the same database (another Worker isolate) sees the same lockout within the
 * second its view of the lockouts may be old, one log line
 * is written per lockout, and the lockout ends after its minute.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { READ_EVERY_MS } from "../../auth/lockout-view.ts";
import { buildApp } from "../../functions/app.ts";
import { SIGN_IN_TOKEN_TTL_MS } from "../../auth/sign-in-tokens.ts";
import type { Logger } from "../../runtime/log.ts";
import { authFailures, signInTokens } from "../../schema/index.ts";
import { csrfFrom, ORIGIN } from "../dashboard/dashboard-client.ts";
import { createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

function capturingLog() {
  const lines: string[] = [];
  const log: Logger = { info: (m) => lines.push(m), error: (m) => lines.push(m) };
  return { log, lockouts: () => lines.filter((l) => l === "authentication locked out").length };
}

const bearer = (app: ReturnType<typeof buildApp>, token: string, address: string) =>
  app.request("/api/agents/default", { headers: { Authorization: `Bearer ${token}`, "cf-connecting-ip": address } });

async function signIn(app: ReturnType<typeof buildApp>, token: string, address: string) {
  const form = csrfFrom(await (await app.request(`${ORIGIN}/sign-in`)).text());
  return app.request(`${ORIGIN}/sign-in`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN, "cf-connecting-ip": address },
    body: new URLSearchParams({ _csrf: form, token }),
  });
}

describe("authentication throttling", () => {
  it("locks an address out after 10 wrong bearer tokens a minute, for everyone sharing the database, with one log line", async () => {
    const { log, lockouts } = capturingLog();
    const deps = await createTestDeps({ log });
    const app = buildApp(() => deps);
    for (let i = 0; i < 10; i++) expect((await bearer(app, `wrong-token-${i}`, "203.0.113.7")).status).toBe(401);
    const locked = await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.7");
    expect(locked.status).toBe(429);
    expect(locked.headers.get("Retry-After")).toBe("60");
    for (let i = 0; i < 20; i++) expect((await bearer(app, `wrong-again-${i}`, "203.0.113.7")).status).toBe(429);
    expect(lockouts()).toBe(1);

    const otherIsolate = buildApp(async () => ({ ...deps }));
    expect((await bearer(otherIsolate, TEST_ADMIN_TOKEN, "203.0.113.7")).status).toBe(429);
    expect((await bearer(otherIsolate, TEST_ADMIN_TOKEN, "198.51.100.1")).status).toBe(200);

    deps.clock.advance(30_000);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.7")).headers.get("Retry-After")).toBe("30");
    deps.clock.advance(30_000);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.7")).status).toBe(200);
  });

  it("another isolate, with its own database handle, sees the lockout within READ_EVERY_MS", async () => {
    const url = `file:${join(mkdtempSync(join(tmpdir(), "fw-throttle-")), "t.db")}`;
    const db = openDatabase(createClient({ url }));
    await applyMigrations(db);
    const deps = await createTestDeps({ db });
    const other = { ...deps, db: openDatabase(createClient({ url })) };
    const app = buildApp(() => deps);
    const otherIsolate = buildApp(() => other);
    expect((await bearer(otherIsolate, TEST_ADMIN_TOKEN, "203.0.113.7")).status).toBe(200);

    for (let i = 0; i < 10; i++) expect((await bearer(app, `wrong-token-${i}`, "203.0.113.7")).status).toBe(401);
    // The isolate that recorded the lockout refuses at once; the other at its next read.
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.7")).status).toBe(429);
    deps.clock.advance(READ_EVERY_MS);
    const locked = await bearer(otherIsolate, TEST_ADMIN_TOKEN, "203.0.113.7");
    expect(locked.status).toBe(429);
    expect(locked.headers.get("Retry-After")).toBe("59");
    expect((await bearer(otherIsolate, TEST_ADMIN_TOKEN, "198.51.100.1")).status).toBe(200);
  });

  it("counts failures per one-minute window: slow guessing is not locked out", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    for (let i = 0; i < 30; i++) {
      expect((await bearer(app, `slow-guess-${i}`, "203.0.113.8")).status).toBe(401);
      deps.clock.advance(10_000);
    }
  });

  it("locks sign-in the same way, and shares the count with bearer failures", async () => {
    const { log, lockouts } = capturingLog();
    const deps = await createTestDeps({ log });
    const app = buildApp(() => deps);
    for (let i = 0; i < 5; i++) expect((await bearer(app, `wrong-${i}`, "203.0.113.9")).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await signIn(app, `wrong-${i}`, "203.0.113.9")).status).toBe(401);
    const locked = await signIn(app, TEST_ADMIN_TOKEN, "203.0.113.9");
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await locked.text()).toContain("Too many failed sign-ins");
    expect(locked.headers.getSetCookie().some((c) => c.startsWith("fw_session="))).toBe(false);
    expect(lockouts()).toBe(1);
  });

  it("the global limit never locks out a valid token: 100+ failures from many addresses, then the right token from a fresh address", async () => {
    const { log, lockouts } = capturingLog();
    const deps = await createTestDeps({ log });
    const app = buildApp(() => deps);
    // Issue #25: 10 addresses x 10 guesses (each address then locked) reach the global limit of 100.
    for (let a = 0; a < 11; a++) for (let i = 0; i < 10; i++) await bearer(app, `guess-${a}-${i}`, `127.0.0.${a + 1}`);
    expect((await bearer(app, "another-guess", "192.0.2.200")).status).toBe(429);
    expect(lockouts()).toBeGreaterThanOrEqual(11);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "192.0.2.201")).status).toBe(200);
    const signedIn = await signIn(app, TEST_ADMIN_TOKEN, "192.0.2.202");
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.getSetCookie().some((c) => c.startsWith("fw_session="))).toBe(true);
    // A locked address stays refused, even with the right token.
    expect((await bearer(app, TEST_ADMIN_TOKEN, "127.0.0.1")).status).toBe(429);
  });

  it("groups IPv6 addresses by /64: guesses spread over one /64 share its limit; another /64 is its own", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    for (let i = 0; i < 10; i++) expect((await bearer(app, `wrong-${i}`, `2001:db8:1:2::${(i + 1).toString(16)}`)).status).toBe(401);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "2001:0db8:0001:0002:ffff:1:2:3")).status).toBe(429);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "2001:db8:1:3::1")).status).toBe(200);
    // An IPv4-mapped IPv6 peer is its IPv4 address.
    for (let i = 0; i < 10; i++) await bearer(app, `wrong-v4-${i}`, "::ffff:203.0.113.5");
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.5")).status).toBe(429);
  });

  it("believes a proxy's header only when TRUST_PROXY names it, taking the hop the proxy appended", async () => {
    const untrusting = await createTestDeps();
    const plain = buildApp(() => untrusting);
    const viaProxy = (app: ReturnType<typeof buildApp>, token: string, forwarded: string) =>
      app.request("/api/agents/default", {
        headers: { Authorization: `Bearer ${token}`, "cf-connecting-ip": "10.0.0.1", "x-forwarded-for": forwarded },
      });
    // Not trusted: a forged header changes nothing, the peer is counted.
    for (let i = 0; i < 10; i++) await viaProxy(plain, `wrong-${i}`, `198.51.100.${i}`);
    expect((await viaProxy(plain, TEST_ADMIN_TOKEN, "198.51.100.99")).status).toBe(429);

    const trusting = await createTestDeps({ vars: { TRUST_PROXY: "X-Forwarded-For" } });
    const app = buildApp(() => trusting);
    // The client may prepend anything; the last hop is what the proxy saw.
    for (let i = 0; i < 10; i++) await viaProxy(app, `wrong-${i}`, `${i}.${i}.${i}.${i}, 198.51.100.7`);
    expect((await viaProxy(app, TEST_ADMIN_TOKEN, "198.51.100.7")).status).toBe(429);
    expect((await viaProxy(app, TEST_ADMIN_TOKEN, "198.51.100.8")).status).toBe(200);
  });

  it("a backward wall-clock step does not extend a lockout: it ends after its minute of monotonic time", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    for (let i = 0; i < 10; i++) await bearer(app, `wrong-${i}`, "203.0.113.20");
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.20")).status).toBe(429);
    deps.clock.stepWall(-2 * 3600_000);
    deps.clock.advance(30_000);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.20")).headers.get("Retry-After")).toBe("30");
    deps.clock.advance(35_000);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.20")).status).toBe(200);
    // Read again from the database (its stored end is still 2 h ahead), it does not start over.
    deps.clock.advance(READ_EVERY_MS);
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.20")).status).toBe(200);
    // And the address can be locked again after the step.
    for (let i = 0; i < 10; i++) await bearer(app, `again-${i}`, "203.0.113.20");
    expect((await bearer(app, TEST_ADMIN_TOKEN, "203.0.113.20")).status).toBe(429);
  });
});

describe("bounded bookkeeping", () => {
  it("drops failure counters once their window and lockout are over", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    for (let i = 0; i < 5; i++) await bearer(app, "wrong-token", `198.51.100.${i}`);
    deps.clock.advance(61_000);
    await bearer(app, "wrong-token", "198.51.100.99");
    const scopes = (await deps.db.select().from(authFailures)).map((r) => r.scope).sort();
    expect(scopes).toEqual(["addr:198.51.100.99", "global"]);
  });

  it("sign-in forms are issued without writes: 10,050 anonymous GETs change no row, and a victim's form still signs in (issue #25)", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const rows = async () => {
      const tables = (
        await deps.db.$client.execute("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
      ).rows.map((r) => String(r.name));
      const counts: Record<string, number> = {};
      for (const t of tables) counts[t] = Number((await deps.db.$client.execute(`select count(*) as n from "${t}"`)).rows[0]!.n);
      return counts;
    };
    const victimForm = csrfFrom(await (await app.request(`${ORIGIN}/sign-in`)).text());
    const before = await rows();
    for (let i = 0; i < 10_050; i++) {
      const page = await app.request(`${ORIGIN}/sign-in`, { headers: { "cf-connecting-ip": `198.18.${i >> 8}.${i & 255}` } });
      if (page.status !== 200) throw new Error(`GET ${i}: ${page.status}`);
    }
    expect(await rows()).toEqual(before);
    deps.clock.advance(62_000);
    const post = (form: string) =>
      app.request(`${ORIGIN}/sign-in`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN, "cf-connecting-ip": "203.0.113.50" },
        body: new URLSearchParams({ _csrf: form, token: TEST_ADMIN_TOKEN }),
      });
    expect((await post(victimForm)).status).toBe(303);
    // Once only; a token this server did not sign, or one past its time, is refused.
    expect((await post(victimForm)).status).toBe(403);
    const [expiry, nonce] = victimForm.split(".");
    expect((await post(`${expiry}.${nonce}.${"0".repeat(64)}`)).status).toBe(403);
    const later = csrfFrom(await (await app.request(`${ORIGIN}/sign-in`)).text());
    deps.clock.advance(SIGN_IN_TOKEN_TTL_MS);
    expect((await post(later)).status).toBe(403);
    // The used tokens' records are pruned by the next post once expired: the table holds only the last 30 minutes' posts.
    expect((await post(csrfFrom(await (await app.request(`${ORIGIN}/sign-in`)).text()))).status).toBe(303);
    expect(await deps.db.select().from(signInTokens)).toHaveLength(1);
  }, 120_000);
});
