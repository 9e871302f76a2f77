/**
 * The reporter setup on the instance page and the API route's roles: an operator's page offers a
 * "Reporter setup" button (a POST; the GET page holds no key), the post answers the key, env and
 * command (no-store) and is audited; a viewer sees no button, and both the post and
 * GET /api/agents/:agent/instances/:id/reporter refuse a viewer (403). The key follows the agent's
 * secret: after a rotation the instance has a new key, and the old one verifies only during the
 * grace. Real libSQL, the app over app.request.
 */
import { describe, expect, it } from "vitest";
import { createOperator } from "../../auth/operators-store.ts";
import { reporterKey } from "../../auth/webhook-secrets.ts";
import { buildApp } from "../../functions/app.ts";
import { operatorActivity } from "../../schema/index.ts";
import { createTestDeps, TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { reconcileFleet } from "../support/one-check.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";

async function setup() {
  const deps = await createTestDeps({
    vars: { SIMULATOR_INSTANCES: "1", SIMULATOR_FAILURE_RATE: "0", PUBLIC_URL: "https://fleet.example.com" },
  });
  await (deps.provider as SimulatorProvider).seed(1);
  await reconcileFleet(deps, "default");
  return deps;
}

describe("the reporter setup on the instance page", () => {
  it("an operator gets a button; its post shows the instance's key, env and command, not cached, audited", async () => {
    const deps = await setup();
    const client = await dashboardClient(deps);
    const page = (await client.page("/fleet/sim-1")).html;
    expect(page).toContain('action="/fleet/sim-1/reporter"');
    const key = await reporterKey(TEST_WEBHOOK_SECRET, "sim-1");
    expect(page).not.toContain(key);

    const res = await client.post("/fleet/sim-1/reporter", {});
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toContain(`FLEETWARDEN_KEY=${key}`);
    expect(html).toContain("FLEETWARDEN_URL=https://fleet.example.com");
    expect(html).toContain("curl -fsSL &#39;https://fleet.example.com/reporter.sh&#39; |");
    const audited = await deps.db.select().from(operatorActivity);
    expect(audited.map((a) => [a.action, a.subject])).toContainEqual(["reporter_key", "sim-1"]);
    expect(JSON.stringify(audited)).not.toContain(key);

    // No CSRF token, no key.
    expect((await client.post("/fleet/sim-1/reporter", {}, { csrf: null })).status).toBe(403);
  });

  it("a viewer gets no button, and neither the post nor the API route answers a viewer", async () => {
    const deps = await setup();
    const token = (await createOperator(deps.db, { name: "vic", role: "viewer", createdBy: "admin", now: deps.clock.now() })).token;
    const viewer = await dashboardClient(deps, token);
    expect((await viewer.page("/fleet/sim-1")).html).not.toContain("/fleet/sim-1/reporter");
    expect((await viewer.post("/fleet/sim-1/reporter", {})).status).toBe(403);
    const api = await viewer.app.request("/api/agents/default/instances/sim-1/reporter", { headers: { authorization: `Bearer ${token}` } });
    expect(api.status).toBe(403);
    expect(((await api.json()) as { error: string }).error).toMatch(/operator/);
    expect(await deps.db.select().from(operatorActivity)).toEqual([]);
  });
});

describe("instance keys rotate with the agent's secret", () => {
  it("after a rotation the key is new; the old one reports until the grace ends, then 401", async () => {
    const deps = await createTestDeps({ vars: { SIMULATOR_INSTANCES: "0", WEBHOOK_SECRET_GRACE_S: "600" } });
    const app = buildApp(() => deps);
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" };
    expect((await app.request("/api/agents", { method: "POST", headers: admin, body: JSON.stringify({ id: "team" }) })).status).toBe(201);
    const keyOf = async () =>
      ((await (await app.request("/api/agents/team/instances/C.1/reporter", { headers: admin })).json()) as { key: string }).key;
    const report = (id: string, key: string, instanceId = "C.1") =>
      app.request("/webhooks/team/instances", signedWebhook(id, { instanceId, state: "running" }, key));

    const before = await keyOf();
    expect((await report("r-1", before)).status).toBe(202);
    expect((await report("r-2", before, "C.2")).status).toBe(401);
    expect((await app.request("/api/agents/team/webhook-secret", { method: "POST", headers: admin })).status).toBe(200);
    const after = await keyOf();
    expect(after).not.toBe(before);
    expect((await report("r-3", after)).status).toBeLessThan(300);
    expect((await report("r-4", before)).status).toBeLessThan(300);
    deps.clock.advance(601_000);
    const late = await report("r-5", before);
    expect(late.status).toBe(401);
    expect((await report("r-6", after)).status).toBeLessThan(300);
  });
});
