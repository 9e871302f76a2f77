/**
 * Role checks over every route: each /api route and each signed-in dashboard post, for a
 * viewer, an operator, an admin and the bootstrap admin (ADMIN_TOKEN). A role below the route's
 * is 403 and writes nothing; a role at or above it gets past authorisation (whatever the route
 * then answers). The table must list every /api route the app has: a new route without an entry
 * fails here, and so must a new dashboard post missing from its table.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { ROLES, type Role } from "../../auth/roles.ts";
import { agents, events, operatorActivity, operators } from "../../schema/index.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

/** method, route pattern as the app registers it, the least role that may use it, a body. */
const API: [string, string, Role, unknown?][] = [
  ["GET", "/api/agents", "viewer"],
  ["POST", "/api/agents", "admin", { id: "second" }],
  ["GET", "/api/agents/:agent", "viewer"],
  ["PATCH", "/api/agents/:agent", "admin", { name: "Renamed" }],
  ["DELETE", "/api/agents/:agent", "admin"],
  ["POST", "/api/agents/:agent/restore", "admin"],
  ["POST", "/api/agents/:agent/webhook-secret", "admin"],
  ["GET", "/api/agents/:agent/replacements", "viewer"],
  ["POST", "/api/agents/:agent/replacements/:id/cancel", "operator"],
  ["POST", "/api/agents/:agent/messages", "operator", { text: "hello" }],
  ["POST", "/api/agents/:agent/trigger", "operator", {}],
  ["POST", "/api/agents/:agent/session/reset", "operator"],
  ["GET", "/api/agents/:agent/runs", "viewer"],
  ["GET", "/api/agents/:agent/runs/:runId", "viewer"],
  ["GET", "/api/agents/:agent/wakes", "viewer"],
  ["GET", "/api/agents/:agent/conversation", "viewer"],
  ["GET", "/api/agents/:agent/memory", "viewer"],
  ["DELETE", "/api/agents/:agent/memory/:key", "operator"],
  ["GET", "/api/agents/:agent/runs/:runId/llm-calls", "viewer"],
  ["POST", "/api/agents/:agent/runs/:runId/replay", "operator", {}],
  ["GET", "/api/agents/:agent/events", "viewer"],
  ["GET", "/api/agents/:agent/health", "viewer"],
  ["GET", "/api/agents/:agent/blocks", "viewer"],
  ["DELETE", "/api/agents/:agent/blocks/:id", "operator"],
  ["GET", "/api/agents/:agent/mode", "viewer"],
  ["POST", "/api/agents/:agent/mode", "operator", { mode: "shadow" }],
  ["GET", "/api/agents/:agent/notifications", "viewer"],
  ["GET", "/api/agents/:agent/actions", "viewer"],
  ["GET", "/api/agents/:agent/approvals", "viewer"],
  ["POST", "/api/agents/:agent/approvals/:id", "operator", { decision: "approve" }],
  ["POST", "/api/cron", "operator"],
  ["GET", "/api/agents/:agent/instances", "viewer"],
  ["GET", "/api/agents/:agent/spend", "viewer"],
  ["POST", "/api/agents/:agent/fleet-breaker/lift", "operator"],
  // The MCP server: every role may POST; the tools it offers follow the role (test/mcp/mcp-server.test.ts).
  ["POST", "/api/agents/:agent/mcp", "viewer", { jsonrpc: "2.0", id: 1, method: "tools/list" }],
  ["GET", "/api/agents/:agent/mcp", "viewer"],
  ["DELETE", "/api/agents/:agent/mcp", "viewer"],
  ["GET", "/api/agents/:agent/instances/:id/events", "viewer"],
  ["POST", "/api/agents/:agent/instances/:id/actions", "operator", { kind: "reboot" }],
  // A read that reveals an instance's reporter key: operator.
  ["GET", "/api/agents/:agent/instances/:id/reporter", "operator"],
  ["POST", "/api/simulator/instances/:id/fail", "operator", { kind: "exit" }],
  ["GET", "/api/operators", "admin"],
  ["POST", "/api/operators", "admin", { name: "new-one", role: "viewer" }],
  ["DELETE", "/api/operators/:id", "admin"],
  ["PATCH", "/api/operators/:id", "admin", { slackUserId: "U0PATCHED" }],
];

const DASHBOARD_POSTS: [string, Role, Record<string, string>][] = [
  ["/trigger", "operator", { nonce: "nonce-00000001" }],
  ["/chat", "operator", { text: "hi" }],
  ["/session/reset", "operator", { confirmed: "yes" }],
  ["/mode", "operator", { mode: "shadow" }],
  ["/memory/some-fact/delete", "operator", {}],
  ["/runs/1/replay", "operator", {}],
  ["/approvals/999", "operator", { decision: "reject" }],
  ["/operators", "admin", { name: "made-here", role: "viewer" }],
  ["/operators/999/revoke", "admin", {}],
  ["/agents", "admin", { id: "made-here" }],
  ["/agents/default", "admin", { debounceHumanMs: "500" }],
  ["/agents/default/archive", "admin", { confirm: "yes" }],
  ["/agents/default/restore", "admin", {}],
  ["/fleet/sim-1/fail", "operator", { kind: "exit" }],
  ["/fleet/sim-1/actions", "operator", { kind: "reboot", nonce: "nonce-00000002", confirm: "yes" }],
  ["/fleet/sim-1/reporter", "operator", {}],
  ["/blocks/999/lift", "operator", {}],
  ["/approvals/blocks/999/lift", "operator", {}],
  ["/fleet-breaker/lift", "operator", {}],
];

/** A dashboard post route as registered, with the values DASHBOARD_POSTS uses for its params. */
const concretePost = (pattern: string) =>
  pattern
    .replace(":approvalId", "999")
    .replace(":operatorId", "999")
    .replace(":agentId", "default")
    .replace(":instanceId", "sim-1")
    .replace(":key", "some-fact")
    .replace(":runId", "1")
    .replace(":blockId", "999");

const concrete = (pattern: string) =>
  pattern
    .replace(":agent", "default")
    .replace(":key", "some-fact")
    .replace(":runId", "1")
    .replace(":id/events", "sim-1/events")
    .replace("instances/:id", "instances/sim-1")
    .replace(":id", "999");

const allowed = (who: Role, needed: Role) => ROLES.indexOf(who) >= ROLES.indexOf(needed);

async function setup() {
  const deps = await createTestDeps();
  const tokens: Record<string, string> = { bootstrap: TEST_ADMIN_TOKEN };
  for (const role of ROLES)
    tokens[role] = (await createOperator(deps.db, { name: `${role}-1`, role, createdBy: "admin", now: deps.clock.now() })).token;
  return { deps, tokens, app: buildApp(() => deps) };
}

const WHO: [string, Role][] = [
  ["viewer", "viewer"],
  ["operator", "operator"],
  ["admin", "admin"],
  ["bootstrap", "admin"],
];

describe("roles on every route", () => {
  it("the table covers every /api route the app registers", () => {
    const app = buildApp(() => {
      throw new Error("not called");
    });
    const registered = new Set(
      app.routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/api/")).map((r) => `${r.method} ${r.path}`),
    );
    expect(new Set(API.map(([m, p]) => `${m} ${p}`))).toEqual(registered);
  });

  it("the dashboard table covers every signed-in post the dashboard registers", () => {
    const app = buildApp(() => {
      throw new Error("not called");
    });
    const registered = app.routes.filter(
      (r) => r.method === "POST" && !r.path.startsWith("/api/") && !/^\/(sign-|webhooks|internal|integrations)/.test(r.path),
    );
    expect(new Set(registered.map((r) => concretePost(r.path)))).toEqual(new Set(DASHBOARD_POSTS.map(([path]) => path)));
  });

  it.each(API)("%s %s needs %s", async (method, pattern, needed, body) => {
    for (const [name, role] of WHO) {
      const { deps, tokens, app } = await setup();
      const before = await deps.db.select().from(events);
      const res = await app.request(concrete(pattern), {
        method,
        headers: { Authorization: `Bearer ${tokens[name]}`, "Content-Type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (allowed(role, needed)) {
        expect([401, 403], `${name} on ${method} ${pattern}`).not.toContain(res.status);
      } else {
        expect(res.status, `${name} on ${method} ${pattern}`).toBe(403);
        expect((await res.json()).error).toMatch(/^forbidden: this needs the (operator|admin) role/);
        expect(await deps.db.select().from(events)).toEqual(before);
        expect(await deps.db.select().from(operators)).toHaveLength(3);
        expect(await deps.db.select().from(operatorActivity)).toHaveLength(0);
      }
    }
  });

  it.each(DASHBOARD_POSTS)("dashboard post %s needs %s", async (path, needed, fields) => {
    for (const [name, role] of WHO) {
      const { deps, tokens } = await setup();
      const client = await dashboardClient(deps, tokens[name]);
      const agentsBefore = await deps.db.select().from(agents);
      const res = await client.post(path, fields);
      if (allowed(role, needed)) {
        expect([401, 403], `${name} on ${path}`).not.toContain(res.status);
      } else {
        expect(res.status, `${name} on ${path}`).toBe(403);
        // The dashboard's refusal is a page in its style naming the role needed and the signed-in one (dashboard/shell/refusal.tsx).
        expect(res.headers.get("content-type"), `${name} on ${path}`).toMatch(/^text\/html/);
        expect(await res.text(), `${name} on ${path}`).toContain(`This needs the ${needed} role; you are signed in as ${role}-1`);
        expect(await deps.db.select().from(events)).toHaveLength(0);
        expect(await deps.db.select().from(operators)).toHaveLength(3);
        expect(await deps.db.select().from(agents)).toEqual(agentsBefore);
      }
    }
  });

  it("the agents pages are for every role (changing agents is the admin's posts above)", async () => {
    for (const [name] of WHO) {
      const { deps, tokens } = await setup();
      const client = await dashboardClient(deps, tokens[name]);
      expect((await client.get("/agents")).status, name).toBe(200);
      expect((await client.get("/agents/default")).status, name).toBe(200);
    }
  });

  it("the operators page is for admins only", async () => {
    for (const [name, role] of WHO) {
      const { deps, tokens } = await setup();
      const client = await dashboardClient(deps, tokens[name]);
      expect((await client.get("/operators")).status, name).toBe(role === "admin" ? 200 : 403);
    }
  });
});
