/**
 * The simulator's economics: healthy running instances work at 40-100 % (deterministic per
 * instance and minute), stopped ones cost their storage, and the injected kinds `idle`, `busy`
 * and `outbid` (POST /api/simulator/instances/:id/fail) reach fleetwarden's view, and
 * GET /api/agents/:agent/instances, as telemetry, an idle mark and an outbid stop.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { type SimulatorProvider, simulatedGpuUtil, simulatedStoragePerHour } from "../../fleet/providers/simulator.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function simulated(count = 2) {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0", RECONCILE_INTERVAL_S: "60", IDLE_GPU_UTIL_PCT: "5" } });
  await (deps.provider as SimulatorProvider).seed(count);
  const app = buildApp(() => deps);
  await app.request("/api/cron", { method: "POST", headers: authHeaders() });
  return { deps, app };
}

const fail = (kind: string) => ({ method: "POST", headers: authHeaders(), body: JSON.stringify({ kind }) });
const listed = async (app: ReturnType<typeof buildApp>) =>
  (await (await app.request("/api/agents/default/instances", { headers: authHeaders() })).json()).instances;

describe("simulator: utilisation and storage", () => {
  it("running instances work at 40-100 %, the same figure within a minute; only running ones report any", () => {
    const seen = new Set<number>();
    for (let minute = 0; minute < 200; minute++) {
      const util = simulatedGpuUtil({ id: `sim-${minute % 7}`, state: "running", failure: null }, minute * 60_000);
      expect(util).toBeGreaterThanOrEqual(40);
      expect(util).toBeLessThanOrEqual(100);
      seen.add(util!);
      expect(simulatedGpuUtil({ id: `sim-${minute % 7}`, state: "running", failure: null }, minute * 60_000 + 59_000)).toBe(util);
    }
    expect(seen.size).toBeGreaterThan(20);
    expect(simulatedGpuUtil({ id: "sim-1", state: "running", failure: "idle" }, 0)).toBe(0);
    expect(simulatedGpuUtil({ id: "sim-1", state: "stopped", failure: null }, 0)).toBeNull();
    expect(simulatedStoragePerHour(2)).toBeCloseTo((2 * 100 * 0.15) / 730, 4);
  });
});

describe("simulator: idle, busy and outbid", () => {
  it("idle: still running at 0 % from now on, marked idle since the injection, and kept idle by reconciliation", async () => {
    const { deps, app } = await simulated();
    const res = await app.request("/api/simulator/instances/sim-1/fail", fail("idle"));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ kind: "idle", instance: { state: "running", gpuUtil: 0 }, reports: [{ outcome: "unchanged" }] });
    const idleAt = deps.clock.now();
    deps.clock.advance(61_000);
    await app.request("/api/cron", { method: "POST", headers: authHeaders() });
    const [one, two] = await listed(app);
    expect(one).toMatchObject({
      id: "sim-1",
      state: "running",
      gpuUtil: 0,
      gpuUtilAt: new Date(deps.clock.now()).toISOString(),
      idleSince: new Date(idleAt).toISOString(),
      costPerHour: 0.42,
    });
    expect(two).toMatchObject({ id: "sim-2", idleSince: null, costPerHour: 2.1 });
    expect(two.gpuUtil).toBeGreaterThanOrEqual(40);
    // An idle instance's container is up: it still heartbeats, so no missed-heartbeat alarm.
    expect(one.heartbeatMissedAt).toBeNull();
  });

  it("busy: back to work, the idle mark cleared", async () => {
    const { deps, app } = await simulated();
    await app.request("/api/simulator/instances/sim-1/fail", fail("idle"));
    deps.clock.advance(1_000);
    const res = await app.request("/api/simulator/instances/sim-1/fail", fail("busy"));
    expect((await res.json()).instance.gpuUtil).toBeGreaterThanOrEqual(40);
    const [one] = await listed(app);
    expect(one).toMatchObject({ state: "running", idleSince: null });
    expect(one.gpuUtil).toBeGreaterThanOrEqual(40);
    const sim = await (deps.provider as SimulatorProvider).get("sim-1");
    expect(sim).toMatchObject({ state: "running", stopReason: null });
  });

  it("outbid: stopped by a higher bid, interruptible, reported with reason outbid; it then costs its storage", async () => {
    const { deps, app } = await simulated();
    const res = await app.request("/api/simulator/instances/sim-2/fail", fail("outbid"));
    const body = await res.json();
    expect(body).toMatchObject({
      instance: { state: "stopped", interruptible: true, stopReason: "outbid", gpuUtil: null },
      reports: [{ outcome: "pending" }],
    });
    const [event] = (await deps.db.$client.execute(`select payload from events where id = ${body.reports[0].eventId}`)).rows;
    expect(JSON.parse(String(event!.payload))).toMatchObject({ instanceId: "sim-2", state: "stopped", reason: "outbid" });
    const [, two] = await listed(app);
    expect(two).toMatchObject({
      state: "stopped",
      costPerHour: simulatedStoragePerHour(2),
      storagePerHour: simulatedStoragePerHour(2),
      interruptible: true,
    });
  });

  it("the kinds are validated: another kind is a 400 naming kind and the new kinds", async () => {
    const { app } = await simulated(1);
    const res = await app.request("/api/simulator/instances/sim-1/fail", fail("lazy"));
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/kind.*idle, busy, outbid/);
  });
});
