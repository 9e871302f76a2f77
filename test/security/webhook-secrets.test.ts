/**
 * Issue #25 item 1: a webhook secret per agent, bound to the agent. An agent created through the
 * API gets its own secret, answered once; a report signed for `default` (WEBHOOK_SECRET) and
 * replayed byte for byte to another agent's route is 401 and writes nothing; a rotation answers a
 * new secret once and the previous one verifies until the grace ends; no GET shows a secret.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function setup(vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars });
  const app = buildApp(() => deps);
  const api = (path: string, init: RequestInit = {}) => app.request(`/api${path}`, { ...init, headers: authHeaders() });
  const count = async (table: string) => Number((await deps.db.$client.execute(`select count(*) as n from ${table}`)).rows[0]!.n);
  return { deps, app, api, count };
}

async function createAgent(api: (path: string, init?: RequestInit) => Response | Promise<Response>, id: string) {
  const res = await api("/agents", { method: "POST", body: JSON.stringify({ id }) });
  expect(res.status).toBe(201);
  return (await res.json()) as { webhookSecret: string };
}

describe("per-agent webhook secrets", () => {
  it("a report signed for default, replayed byte for byte to another agent, is 401 and stores nothing", async () => {
    const { app, api, count } = await setup();
    const { webhookSecret } = await createAgent(api, "teamb");
    expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const captured = signedWebhook("msg_replay", { instanceId: "ghost-1", state: "running" });
    const replayed = await app.request("/webhooks/teamb/instances", captured);
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as { error: string }).error).toMatch(/^webhook signature rejected/);
    expect(await count("events")).toBe(0);
    expect(await count("instances")).toBe(0);

    // The same report reaches default, and teamb's own secret signs teamb's reports.
    expect((await app.request("/webhooks/default/instances", captured)).status).toBe(202);
    expect(
      (await app.request("/webhooks/teamb/instances", signedWebhook("msg_b", { instanceId: "b-1", state: "running" }, webhookSecret)))
        .status,
    ).toBe(202);
    // And teamb's secret forges nothing for default.
    expect(
      (await app.request("/webhooks/default/instances", signedWebhook("msg_c", { instanceId: "d-1", state: "running" }, webhookSecret)))
        .status,
    ).toBe(401);
  });

  it("rotation: a new secret once, the previous verifies through the grace and not after", async () => {
    const { deps, app, api } = await setup({ WEBHOOK_SECRET_GRACE_S: "600" });
    const { webhookSecret: first } = await createAgent(api, "teamc");
    const rotated = await api("/agents/teamc/webhook-secret", { method: "POST" });
    expect(rotated.status).toBe(200);
    const body = (await rotated.json()) as { webhookSecret: string; previousValidUntil: string };
    expect(body.webhookSecret).not.toBe(first);
    expect(body.previousValidUntil).toBe(new Date(deps.clock.now() + 600_000).toISOString());

    const report = (id: string, secret: string) =>
      app.request("/webhooks/teamc/instances", signedWebhook(id, { instanceId: "c-1", state: "running" }, secret));
    expect((await report("r1", first)).status).toBe(202);
    expect((await report("r2", body.webhookSecret)).status).toBe(202);
    deps.clock.advance(600_000);
    expect((await report("r3", first)).status).toBe(401);
    expect((await report("r4", body.webhookSecret)).status).toBe(202);
  });

  it("the default agent's secret is WEBHOOK_SECRET: rotating it here is refused", async () => {
    const { api } = await setup();
    const res = await api("/agents/default/webhook-secret", { method: "POST" });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: string }).error).toContain("WEBHOOK_SECRET");
  });

  it("no GET answer carries a secret", async () => {
    const { api } = await setup();
    const { webhookSecret } = await createAgent(api, "teamd");
    const rotated = ((await (await api("/agents/teamd/webhook-secret", { method: "POST" })).json()) as { webhookSecret: string })
      .webhookSecret;
    for (const path of ["/agents", "/agents/teamd"]) {
      const text = await (await api(path)).text();
      expect(text).not.toContain(webhookSecret.slice(6));
      expect(text).not.toContain(rotated.slice(6));
      expect(text).not.toContain("whsec_");
    }
    const listed = ((await (await api("/agents")).json()) as { agents: { id: string; webhookSecret: unknown }[] }).agents;
    expect(listed.find((a) => a.id === "teamd")?.webhookSecret).toMatchObject({ own: true });
  });
});
