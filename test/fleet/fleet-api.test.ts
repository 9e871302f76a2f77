import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { events, simulatorInstances } from "../../schema/index.ts";
import { createTestDeps, authHeaders, type RecordingScheduler, type TestDeps } from "../support/test-deps.ts";
import { startVastServer, type VastServer } from "./vast-server.ts";

let server: VastServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function simulated(count = 2) {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
  await (deps.provider as SimulatorProvider).seed(count);
  return { deps, app: buildApp(() => deps) };
}

const fail = (kind: unknown) => ({ method: "POST", headers: authHeaders(), body: JSON.stringify({ kind }) });
const count = async (deps: TestDeps, table: string) =>
  Number((await deps.db.$client.execute(`select count(*) as n from ${table}`)).rows[0]!.n);

describe("GET /api/agents/:agent/instances", () => {
  it("lists the fleet as fleetwarden sees it, says it is simulated, with each instance's recent events", async () => {
    const { deps, app } = await simulated(2);
    await app.request("/api/cron", { method: "POST", headers: authHeaders() });
    deps.clock.advance(1_000);
    await app.request("/api/simulator/instances/sim-2/fail", fail("oom"));
    const res = await app.request("/api/agents/default/instances", { headers: authHeaders() });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.simulated).toBe(true);
    expect(body.instances).toHaveLength(2);
    expect(body.instances[1]).toMatchObject({
      id: "sim-2",
      state: "exited",
      gpuName: "A100 SXM4",
      gpuCount: 2,
      pricePerHour: 2.1,
      label: "trainer-2",
      statusMessage: expect.stringMatching(/CUDA out of memory/),
      lastSeenAt: new Date(deps.clock.now()).toISOString(),
      stateAt: new Date(deps.clock.now()).toISOString(),
      gone: false,
    });
    expect(body.instances[1].recentEvents.map((e: { toState: string; source: string }) => [e.toState, e.source])).toEqual([
      ["exited", "webhook"],
      ["running", "reconcile"],
    ]);

    const history = await app.request("/api/agents/default/instances/sim-2/events?limit=1", { headers: authHeaders() });
    expect((await history.json()).events.map((e: { toState: string }) => e.toState)).toEqual(["exited"]);
  });

  it("keeps at most five recent events per instance, newest first", async () => {
    const { deps, app } = await simulated(1);
    for (const kind of ["exit", "stuck_loading", "host_offline", "exit", "stuck_loading", "host_offline", "exit"]) {
      deps.clock.advance(1_000);
      expect((await app.request("/api/simulator/instances/sim-1/fail", fail(kind))).status).toBe(200);
    }
    const body = await (await app.request("/api/agents/default/instances", { headers: authHeaders() })).json();
    expect(body.instances[0].recentEvents.map((e: { toState: string }) => e.toState)).toEqual([
      "exited",
      "offline",
      "loading",
      "exited",
      "offline",
    ]);
    expect(await count(deps, "instance_events")).toBe(7);
  });

  it("requires the admin token and a known agent; says simulated:false for Vast.ai", async () => {
    const { deps, app } = await simulated(0);
    expect((await app.request("/api/agents/default/instances")).status).toBe(401);
    const unknown = await app.request("/api/agents/nobody/instances", { headers: authHeaders() });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatch(/unknown agent/);
    const vastApp = buildApp(() => ({ ...deps, provider: new VastProvider({ apiKey: "k", baseUrl: "http://127.0.0.1:9" }) }));
    const body = await (await vastApp.request("/api/agents/default/instances", { headers: authHeaders() })).json();
    expect(body).toEqual({
      simulated: false,
      provider: "vast",
      capabilities: ["start", "stop", "reboot", "destroy", "label", "logs", "create", "telemetry"],
      instances: [],
    });
  });
});

describe("POST /api/simulator/instances/:id/fail", () => {
  it("injects the failure and reports it as a webhook would: one pending event and a requested run", async () => {
    const { deps, app } = await simulated(1);
    const res = await app.request("/api/simulator/instances/sim-1/fail", fail("host_offline"));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      kind: "host_offline",
      instance: { id: "sim-1", state: "offline" },
      reports: [{ agentId: "default", outcome: "pending" }],
    });
    const [event] = await deps.db.select().from(events);
    expect(event).toMatchObject({ id: body.reports[0].eventId, source: "webhook", priority: 1, status: "pending" });
    const [sim] = await deps.db.select().from(simulatorInstances);
    expect(sim).toMatchObject({ state: "offline", failure: "host_offline" });
    const published = (deps.scheduler as RecordingScheduler).published;
    expect(published).toEqual([
      expect.objectContaining({
        body: expect.objectContaining({ type: "run", agentId: "default" }),
        notBefore: deps.clock.now() + deps.config.debounceStateMs,
      }),
    ]);
  });

  it("rejects a bad kind with 400 naming the field, and writes nothing", async () => {
    const { deps, app } = await simulated(1);
    for (const kind of ["meltdown", 3, undefined]) {
      const res = await app.request("/api/simulator/instances/sim-1/fail", fail(kind));
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/kind/);
    }
    const notJson = await app.request("/api/simulator/instances/sim-1/fail", { method: "POST", headers: authHeaders(), body: "{" });
    expect(notJson.status).toBe(400);
    expect(await count(deps, "events")).toBe(0);
    const [sim] = await deps.db.select().from(simulatorInstances);
    expect(sim).toMatchObject({ state: "running", failure: null });
  });

  it("404 for an instance the simulator does not have; 409 when the fleet is not simulated", async () => {
    const { deps, app } = await simulated(1);
    const missing = await app.request("/api/simulator/instances/sim-9/fail", fail("exit"));
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toMatch(/sim-9/);

    server = await startVastServer({ apiKey: "k" });
    const vastApp = buildApp(() => ({ ...deps, provider: new VastProvider({ apiKey: "k", baseUrl: server!.url }) }));
    const conflict = await vastApp.request("/api/simulator/instances/sim-1/fail", fail("exit"));
    expect(conflict.status).toBe(409);
    expect((await conflict.json()).error).toMatch(/not simulated/);
    expect(server.requests).toHaveLength(0);
    expect(await count(deps, "events")).toBe(0);
  });

  it("requires the admin token", async () => {
    const { app } = await simulated(1);
    const res = await app.request("/api/simulator/instances/sim-1/fail", {
      method: "POST",
      body: JSON.stringify({ kind: "exit" }),
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(401);
  });
});
