/**
 * A provider per agent: one deployment, one agent on Vast.ai and one on RunPod (each through its
 * strict stand-in over real HTTP), each reconciling its own fleet in the real tick; the provider
 * and key set through the agents API, the key masked wherever settings are shown and kept when
 * the mask is sent back, and a provider with no key anywhere refused with a 400 naming why.
 */
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { agents } from "../../schema/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";
import { runpodPodRow, startRunpodServer, type RunpodServer } from "../fleet/runpod-server.ts";
import { startVastServer, vastInstance, type VastServer } from "../fleet/vast-server.ts";

const RUNPOD_KEY = "rp-0123456789abcdef-SECRET";
const VAST_KEY = "vast-key-for-team-v";
let servers: (VastServer | RunpodServer)[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function deployment(vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars });
  const app = buildApp(() => deps);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, headers: authHeaders(), body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const instancesOf = async (agentId: string) =>
    ((await call("GET", `/api/agents/${agentId}/instances`)).json.instances as { id: string; state: string }[])
      .map((i) => `${i.id}:${i.state}`)
      .sort();
  const stored = async (id: string) =>
    (await deps.db.select().from(agents).where(eq(agents.id, id)))[0]?.settings as Record<string, any> | undefined;
  return { deps, call, instancesOf, stored };
}

describe("a provider per agent", () => {
  it("two agents on different providers each reconcile and act on their own fleet", async () => {
    const vast = await startVastServer({ apiKey: VAST_KEY, instances: [vastInstance(11), vastInstance(12)] });
    const runpod = await startRunpodServer({
      apiKey: RUNPOD_KEY,
      pods: [runpodPodRow("podaaa1"), runpodPodRow("podbbb2", { runtime: null })],
    });
    servers.push(vast, runpod);
    const { deps, call, instancesOf } = await deployment();
    expect(
      (await call("POST", "/api/agents", { id: "team-v", settings: { provider: { kind: "vast", apiKey: VAST_KEY, url: vast.url } } }))
        .status,
    ).toBe(201);
    expect(
      (await call("POST", "/api/agents", { id: "team-r", settings: { provider: { kind: "runpod", apiKey: RUNPOD_KEY, url: runpod.url } } }))
        .status,
    ).toBe(201);

    await runCronTick(deps);
    expect(await instancesOf("team-v")).toEqual(["11:running", "12:running"]);
    expect(await instancesOf("team-r")).toEqual(["podaaa1:running", "podbbb2:loading"]);
    expect(vast.requests.every((r) => r.authorization === `Bearer ${VAST_KEY}`)).toBe(true);
    expect(runpod.requests.every((r) => r.authorization === `Bearer ${RUNPOD_KEY}`)).toBe(true);

    // An action goes to the agent's own provider, and only there.
    const teamR = (await withAgent(deps, "team-r"))!.deps;
    const vastCalls = vast.requests.length;
    const done = await executeAction(teamR, {
      agentId: "team-r",
      runId: null,
      instanceId: "podaaa1",
      kind: "stop",
      decidedBy: "human",
      idempotencyKey: "r-stop-1",
    });
    expect(done.status).toBe("succeeded");
    expect(runpod.pods.get("podaaa1")!.desiredStatus).toBe("EXITED");
    expect(vast.requests.length).toBe(vastCalls);
  });

  it("shows the key masked, keeps it when the mask is sent back, and replaces it when retyped", async () => {
    const { call, stored } = await deployment();
    const created = await call("POST", "/api/agents", { id: "team-r", settings: { provider: { kind: "runpod", apiKey: RUNPOD_KEY } } });
    expect(created.json.settings.provider).toEqual({ kind: "runpod", apiKey: "…CRET" });
    expect(JSON.stringify((await call("GET", "/api/agents")).json)).not.toContain("SECRET1");
    expect(JSON.stringify((await call("GET", "/api/agents/team-r")).json)).not.toContain(RUNPOD_KEY);

    await call("PATCH", "/api/agents/team-r", { settings: { ...created.json.settings, mode: "shadow" } });
    expect((await stored("team-r"))!.provider.apiKey).toBe(RUNPOD_KEY);
    await call("PATCH", "/api/agents/team-r", { settings: { provider: { kind: "runpod", apiKey: "rp-new-key-0000000000" } } });
    expect((await stored("team-r"))!.provider.apiKey).toBe("rp-new-key-0000000000");
  });

  it("refuses a provider with no key in the setting nor the environment (400 naming why), writing nothing", async () => {
    const { call, stored } = await deployment();
    const refused = await call("POST", "/api/agents", { id: "team-l", settings: { provider: { kind: "lambda" } } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.json)).toContain("provider lambda needs an API key");
    expect(JSON.stringify(refused.json)).toContain("LAMBDA_API_KEY");
    expect(await stored("team-l")).toBeUndefined();

    expect((await call("POST", "/api/agents", { id: "team-s", settings: {} })).status).toBe(201);
    expect((await call("PATCH", "/api/agents/team-s", { settings: { provider: { kind: "runpod" } } })).status).toBe(400);
    expect((await stored("team-s"))!.provider).toBeUndefined();
  });

  it("takes the environment's key for the kind when the setting gives none", async () => {
    const runpod = await startRunpodServer({ apiKey: RUNPOD_KEY, pods: [runpodPodRow("podenv01")] });
    servers.push(runpod);
    const { deps, call, instancesOf } = await deployment({ RUNPOD_API_KEY: RUNPOD_KEY, RUNPOD_URL: runpod.url });
    expect((await call("POST", "/api/agents", { id: "team-r", settings: { provider: { kind: "runpod" } } })).status).toBe(201);
    await runCronTick(deps);
    expect(await instancesOf("team-r")).toEqual(["podenv01:running"]);
  });
});
