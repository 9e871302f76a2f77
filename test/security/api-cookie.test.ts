/**
 * /api with the dashboard's cookie instead of a bearer token: reads pass; a write passes only
 * from this site's Origin with this session's X-CSRF-Token, and is otherwise 403 with nothing
 * written. (test/browser/cross-origin.test.ts shows the same in Chromium.)
 */
import { describe, expect, it } from "vitest";
import { events } from "../../schema/index.ts";
import { getAgentState } from "../../pipeline/index.ts";
import { csrfFrom, dashboardClient, ORIGIN, signInCookie } from "../dashboard/dashboard-client.ts";
import { createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

describe("cookie access to /api", () => {
  it("reads with the cookie alone; writes need Origin and the session's CSRF token", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const other = await signInCookie(client.app, TEST_ADMIN_TOKEN);
    const otherCsrf = csrfFrom(await (await client.app.request(`${ORIGIN}/`, { headers: { Cookie: other } })).text());
    const write = (path: string, headers: Record<string, string>) =>
      client.app.request(`${ORIGIN}${path}`, {
        method: "POST",
        headers: { Cookie: client.cookie, "Content-Type": "application/json", ...headers },
        body: "{}",
      });

    expect((await client.app.request(`${ORIGIN}/api/agents/default`, { headers: { Cookie: client.cookie } })).status).toBe(200);
    const refused: Record<string, string>[] = [
      {},
      { Origin: ORIGIN },
      { "X-CSRF-Token": client.csrf },
      { Origin: "http://127.0.0.1:9999", "X-CSRF-Token": client.csrf },
      { Origin: ORIGIN, "X-CSRF-Token": otherCsrf },
    ];
    for (const headers of refused) {
      expect((await write("/api/agents/default/trigger", headers)).status, JSON.stringify(headers)).toBe(403);
      expect((await write("/api/agents/default/session/reset", headers)).status).toBe(403);
    }
    expect(await deps.db.select().from(events)).toEqual([]);
    expect((await getAgentState(deps, "default"))!.sessionEpoch).toBe(1);

    expect((await write("/api/agents/default/trigger", { Origin: ORIGIN, "X-CSRF-Token": client.csrf })).status).toBe(202);
    expect(await deps.db.select().from(events)).toHaveLength(1);
  });
});
