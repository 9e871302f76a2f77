/**
 * A write with the session cookie is decided by one rule (auth/session-write.ts), whether it is a
 * dashboard form post (token in `_csrf`) or an /api write (token in X-CSRF-Token): the same
 * origins and tokens pass and fail on both, PUBLIC_URL's origin included, with nothing written
 * when refused.
 */
import { describe, expect, it } from "vitest";
import { events } from "../../schema/index.ts";
import { dashboardClient, ORIGIN } from "../dashboard/dashboard-client.ts";
import { createTestDeps, testConfig } from "../support/test-deps.ts";

const PUBLIC = "https://fleet.example.com";

describe("one rule for cookie writes", () => {
  it("the dashboard and the API accept and refuse the same origins and tokens", async () => {
    const deps = await createTestDeps({ vars: { PUBLIC_URL: PUBLIC } });
    const client = await dashboardClient(deps);
    let n = 0;
    const viaApi = (origin: string | null, token: string | null) =>
      client.app.request(`${ORIGIN}/api/agents/default/trigger`, {
        method: "POST",
        headers: {
          Cookie: client.cookie,
          "Content-Type": "application/json",
          ...(origin ? { Origin: origin } : {}),
          ...(token ? { "X-CSRF-Token": token } : {}),
        },
        body: "{}",
      });
    const viaForm = (origin: string | null, token: string | null) =>
      client.post("/trigger", { nonce: `nonce-${String(++n).padStart(8, "0")}` }, { origin, csrf: token });

    const cases: [string | null, string | null, boolean][] = [
      [ORIGIN, client.csrf, true],
      [PUBLIC, client.csrf, true],
      [null, client.csrf, false],
      ["https://evil.example", client.csrf, false],
      [`${ORIGIN}:8443`, client.csrf, false],
      [ORIGIN, null, false],
      [ORIGIN, "f".repeat(64), false],
      [ORIGIN, client.csrf.slice(0, -1), false],
    ];
    for (const [origin, token, accepted] of cases) {
      const label = `${origin} ${token === client.csrf ? "session token" : token}`;
      const before = (await deps.db.select().from(events)).length;
      const api = await viaApi(origin, token);
      const form = await viaForm(origin, token);
      expect([api.status, form.status], label).toEqual(accepted ? [202, 303] : [403, 403]);
      expect((await deps.db.select().from(events)).length, label).toBe(before + (accepted ? 2 : 0));
    }
  });

  it("refuses Origin: null even when PUBLIC_URL's own origin is null (a config that bypassed parseConfig)", async () => {
    const deps = await createTestDeps({ config: { ...testConfig(), publicUrl: "javascript:x" } });
    const client = await dashboardClient(deps);
    const res = await client.app.request(`${ORIGIN}/api/agents/default/trigger`, {
      method: "POST",
      headers: { Cookie: client.cookie, "Content-Type": "application/json", Origin: "null", "X-CSRF-Token": client.csrf },
      body: "{}",
    });
    expect(res.status).toBe(403);
    expect(await deps.db.select().from(events)).toHaveLength(0);
  });
});
