/**
 * Attack: whoever may edit an agent's settings points its `provider.url` at a host of their own
 * (here a loopback sink) and gives no key, so the agent's provider falls back to the deployment's
 * VAST_API_KEY and sends it there as a Bearer header on the next tick (issue #37 item 8).
 * Guard: fleet/providers/providers.ts gives the environment's key for a kind only to that kind's
 * own host (the origin of VAST_URL, RUNPOD_URL, LAMBDA_URL): a per-agent `provider.url` elsewhere
 * needs its own `provider.apiKey`. The agents API refuses such a setting with a 400 naming it,
 * nothing written; one already stored makes every call of that agent's provider fail naming it,
 * and the sink never receives a request.
 */
import { createServer } from "node:http";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { agents } from "../../schema/index.ts";
import { listenLoopback } from "../support/loopback-server.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

const DEPLOYMENT_KEY = "vast-deployment-key-SECRET";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A loopback host that records every request's authorization header and answers an empty list. */
async function sink() {
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ instances: [] }));
  });
  const { origin, close } = await listenLoopback(server);
  closers.push(close);
  return { url: origin, seen };
}

async function deployment() {
  const deps = await createTestDeps({ vars: { VAST_API_KEY: DEPLOYMENT_KEY, ALLOW_PRIVATE_URLS: "false" } });
  const app = buildApp(() => deps);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, headers: authHeaders(), body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  return { deps, call };
}

describe("a per-agent provider.url without its own key", () => {
  it("is refused by the agents API with a 400 naming provider.url and the key it needs, nothing written", async () => {
    const host = await sink();
    const { deps, call } = await deployment();
    const refused = await call("POST", "/api/agents", { id: "team-x", settings: { provider: { kind: "vast", url: host.url } } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.json)).toMatch(/provider\.url .* needs its own provider\.apiKey/);
    expect(JSON.stringify(refused.json)).toContain("VAST_API_KEY");
    expect(await deps.db.select().from(agents).where(eq(agents.id, "team-x"))).toEqual([]);

    expect((await call("POST", "/api/agents", { id: "team-y", settings: {} })).status).toBe(201);
    expect((await call("PATCH", "/api/agents/team-y", { settings: { provider: { kind: "vast", url: host.url } } })).status).toBe(400);
    expect(host.seen).toEqual([]);
  });

  it("stored anyway, the deployment key never reaches the sink: every call fails naming provider.url", async () => {
    const host = await sink();
    const { deps, call } = await deployment();
    expect((await call("POST", "/api/agents", { id: "team-x", settings: {} })).status).toBe(201);
    await deps.db
      .update(agents)
      .set({ settings: { provider: { kind: "vast", url: host.url } } })
      .where(eq(agents.id, "team-x"));

    await runCronTick(deps);
    const agent = (await withAgent(deps, "team-x"))!;
    await expect(agent.deps.provider.list()).rejects.toThrow(/provider\.url .* needs its own provider\.apiKey/);
    expect(host.seen.filter((h) => h?.includes(DEPLOYMENT_KEY))).toEqual([]);
    expect(host.seen).toEqual([]);
  });

  it("with its own key, the sink gets that key only; the deployment's own host keeps the deployment key", async () => {
    const host = await sink();
    const { deps, call } = await deployment();
    const created = await call("POST", "/api/agents", {
      id: "team-x",
      settings: { provider: { kind: "vast", url: host.url, apiKey: "team-x-own-key" } },
    });
    expect(created.status).toBe(201);
    await (await withAgent(deps, "team-x"))!.deps.provider.list();
    expect(host.seen.length).toBeGreaterThan(0);
    expect(host.seen.every((h) => h === "Bearer team-x-own-key")).toBe(true);
    // The environment's own URL (any path on its origin) may use the environment's key.
    expect(
      (await call("POST", "/api/agents", { id: "team-v", settings: { provider: { kind: "vast", url: "https://console.vast.ai/" } } }))
        .status,
    ).toBe(201);
  });
});
