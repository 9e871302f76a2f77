import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { authHeaders, createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

async function setup() {
  const deps = await createTestDeps();
  return { deps, app: buildApp(() => deps) };
}

describe("GET /healthz", () => {
  it("answers without auth, with a real database check and the adapters in use", async () => {
    const { app } = await setup();
    const res = await app.request("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: true,
      db: "ok",
      scheduler: { kind: "test", ok: true },
      llm: "none",
      provider: "simulator",
    });
  });

  it("says the database is unreachable when it is", async () => {
    const { deps, app } = await setup();
    deps.db.$client.close();
    const res = await app.request("/healthz");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ok: false, db: "unreachable" });
  });
});

describe("operator API auth", () => {
  it.each([
    ["missing", {}],
    ["wrong", { Authorization: "Bearer not-the-token-at-all" }],
    ["not bearer", { Authorization: `Basic ${TEST_ADMIN_TOKEN}` }],
  ])("refuses a %s token with 401 JSON", async (_, headers) => {
    const { app } = await setup();
    const res = await app.request("/api/agents/default", { headers });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toMatch(/token|Authorization/);
  });

  it("accepts the admin token", async () => {
    const { app } = await setup();
    const res = await app.request("/api/agents/default", { headers: authHeaders() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      agentId: "default",
      runCounter: 0,
      sessionEpoch: 1,
      running: false,
      runningRunId: null,
      nextRunAt: null,
      pendingEvents: 0,
      pendingWakes: 0,
      contextTokens: 0,
      contextBudget: 30000,
      name: "default",
      settings: {},
      archived: false,
    });
  });

  it("401s before anything is written", async () => {
    const { deps, app } = await setup();
    const res = await app.request("/api/agents/default/messages", { method: "POST", body: JSON.stringify({ text: "hi" }) });
    expect(res.status).toBe(401);
    const rs = await deps.db.$client.execute("select count(*) as n from events");
    expect(Number(rs.rows[0]!.n)).toBe(0);
  });
});

describe("error shapes", () => {
  it("unknown route → 404 JSON", async () => {
    const { app } = await setup();
    const res = await app.request("/no/such/route");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not found: GET /no/such/route" });
  });

  it("unknown agent → 404 JSON on every route group; a malformed agent id → 400", async () => {
    const { app } = await setup();
    for (const path of [
      "/api/agents/ghost",
      "/api/agents/ghost/runs",
      "/api/agents/ghost/notifications",
      "/api/agents/ghost/instances",
      "/api/agents/ghost/approvals",
    ]) {
      const res = await app.request(path, { headers: authHeaders() });
      expect(res.status, path).toBe(404);
      expect((await res.json()).error).toBe("unknown agent: ghost");
    }
    const bad = await app.request("/api/agents/not%20an%20id/runs", { headers: authHeaders() });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^invalid param: agent/);
  });

  it("invalid input → 400 naming the field, nothing written", async () => {
    const { deps, app } = await setup();
    const res = await app.request("/api/agents/default/messages", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ text: "" }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^invalid body: text: /);
    const tooLong = await app.request("/api/agents/default/messages", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ text: "x".repeat(8001) }),
    });
    expect(tooLong.status).toBe(400);
    const badQuery = await app.request("/api/agents/default/runs?limit=0", { headers: authHeaders() });
    expect(badQuery.status).toBe(400);
    expect((await badQuery.json()).error).toMatch(/^invalid query: limit/);
    const rs = await deps.db.$client.execute("select count(*) as n from events");
    expect(Number(rs.rows[0]!.n)).toBe(0);
  });

  it("malformed JSON → 400 JSON", async () => {
    const { app } = await setup();
    const res = await app.request("/api/agents/default/messages", { method: "POST", headers: authHeaders(), body: "{nope" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/JSON/);
  });

  it("a body over 256 KiB → 413 JSON, nothing written", async () => {
    const { deps, app } = await setup();
    const res = await app.request("/api/agents/default/messages", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ text: "x".repeat(300 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toMatch(/too large/);
    const rs = await deps.db.$client.execute("select count(*) as n from events");
    expect(Number(rs.rows[0]!.n)).toBe(0);
  });

  it("an unexpected error → 500 JSON without internals, with the request id", async () => {
    const { deps, app } = await setup();
    const logged: unknown[] = [];
    deps.log = { info: () => {}, error: (_m, f) => logged.push(f) };
    await deps.db.$client.execute("drop table events");
    const res = await app.request("/api/agents/default/messages", {
      method: "POST",
      headers: authHeaders({ "X-Request-Id": "req-42" }),
      body: JSON.stringify({ text: "hello" }),
    });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({ error: "internal error", requestId: "req-42" });
    expect(JSON.stringify(logged)).toContain("req-42");
  });
});
