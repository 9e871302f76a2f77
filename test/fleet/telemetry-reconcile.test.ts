/**
 * Reconciliation writes what the provider's list says about economics: each listed instance's
 * utilisation and disk use as one sample (source vast or simulator), its storage cost, contract
 * end and interruptibility on the row, and a stop by a higher bid as an event with
 * `reason: "outbid"`. Vast.ai is the strict fake over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { reconcileFleet } from "../support/one-check.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { SAMPLE_EVERY_MS } from "../../fleet/instances/telemetry.ts";
import { outbidRow, startVastServer, vastInstance, type VastFakeOptions, type VastServer } from "./vast-server.ts";

let server: VastServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function vastDeps(options: VastFakeOptions) {
  server = await startVastServer({ apiKey: "k", ...options });
  const base = await createTestDeps({ vars: { RECONCILE_INTERVAL_S: "60", IDLE_GPU_UTIL_PCT: "5" } });
  const provider = new VastProvider({ apiKey: "k", baseUrl: server.url, sleep: async () => {}, maxAttempts: 1 });
  return { ...base, provider };
}

type Deps = Awaited<ReturnType<typeof vastDeps>>;
const rows = async (deps: Deps, sql: string) => (await deps.db.$client.execute(sql)).rows;

describe("reconciliation: telemetry and economics from the provider's list", () => {
  it("writes one sample per listed instance per sample interval and the economics columns, new and unchanged instances alike", async () => {
    const deps = await vastDeps({
      instances: [vastInstance(11, { gpu_util: 64, disk_usage: 25, disk_space: 50 }), vastInstance(12, { gpu_util: 1, is_bid: true })],
    });
    await reconcileFleet(deps, "default");
    expect(
      await rows(
        deps,
        "select id, gpu_util, disk_used_pct, telemetry_source, idle_since, storage_per_hour, ends_at, interruptible from instances order by id",
      ),
    ).toEqual([
      expect.objectContaining({
        id: "11",
        gpu_util: 64,
        disk_used_pct: 50,
        telemetry_source: "vast",
        idle_since: null,
        storage_per_hour: 0.0139,
        ends_at: 1769904000000,
        interruptible: 0,
      }),
      expect.objectContaining({ id: "12", gpu_util: 1, telemetry_source: "vast", idle_since: deps.clock.now(), interruptible: 1 }),
    ]);
    const firstAt = deps.clock.now();
    // A sample interval on, nothing changed state: one more sample each, and the idle mark is kept.
    deps.clock.advance(SAMPLE_EVERY_MS);
    server!.instances.get(11)!.gpu_util = 70;
    await reconcileFleet(deps, "default");
    expect(await rows(deps, "select instance_id, gpu_util, source from instance_telemetry order by id")).toEqual([
      expect.objectContaining({ instance_id: "11", gpu_util: 64, source: "vast" }),
      expect.objectContaining({ instance_id: "12", gpu_util: 1 }),
      expect.objectContaining({ instance_id: "11", gpu_util: 70 }),
      expect.objectContaining({ instance_id: "12", gpu_util: 1 }),
    ]);
    expect((await rows(deps, "select idle_since from instances where id = '12'"))[0]!.idle_since).toBe(firstAt);
  });

  it("a turn not yet due writes no sample (one per RECONCILE_INTERVAL_S)", async () => {
    const deps = await vastDeps({ instances: [vastInstance(21)] });
    await reconcileFleet(deps, "default");
    deps.clock.advance(10_000);
    await reconcileFleet(deps, "default");
    expect(Number((await rows(deps, "select count(*) as n from instance_telemetry"))[0]!.n)).toBe(1);
  });

  it("a stop by a higher bid is an event with reason outbid and ends the idle mark; an owner's stop has no reason", async () => {
    const deps = await vastDeps({ instances: [vastInstance(31, { is_bid: true, gpu_util: 0 }), vastInstance(32, { gpu_util: 0 })] });
    await reconcileFleet(deps, "default");
    server!.instances.set(31, outbidRow(31));
    Object.assign(server!.instances.get(32)!, {
      actual_status: "stopped",
      intended_status: "stopped",
      cur_state: "stopped",
      gpu_util: null,
    });
    deps.clock.advance(61_000);
    await reconcileFleet(deps, "default");
    const payloads = (await rows(deps, "select payload from events order by id")).map((r) => JSON.parse(String(r.payload)));
    expect(payloads.filter((p) => p.state === "stopped")).toEqual([
      expect.objectContaining({ instanceId: "31", reason: "outbid" }),
      expect.not.objectContaining({ reason: expect.anything() }),
    ]);
    expect(await rows(deps, "select id, state, idle_since from instances order by id")).toEqual([
      expect.objectContaining({ id: "31", state: "stopped", idle_since: null }),
      expect.objectContaining({ id: "32", state: "stopped", idle_since: null }),
    ]);
  });

  it("an idle instance the provider stops listing is gone and no longer idle", async () => {
    const deps = await vastDeps({ instances: [vastInstance(41, { gpu_util: 0 })] });
    await reconcileFleet(deps, "default");
    expect((await rows(deps, "select idle_since from instances"))[0]!.idle_since).toBe(deps.clock.now());
    server!.instances.delete(41);
    deps.clock.advance(61_000);
    await reconcileFleet(deps, "default");
    expect((await rows(deps, "select gone_at, idle_since from instances"))[0]).toMatchObject({
      gone_at: deps.clock.now(),
      idle_since: null,
    });
  });

  it("the simulator's list is sampled too, as source simulator, with storage cost per hour", async () => {
    const base = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0", RECONCILE_INTERVAL_S: "60" } });
    const provider = new SimulatorProvider(base.db, base.clock);
    await provider.seed(2);
    const deps = { ...base, provider };
    await reconcileFleet(deps, "default");
    const stored = await rows(deps as unknown as Deps, "select gpu_util, telemetry_source, storage_per_hour from instances order by id");
    for (const row of stored) {
      expect(row.telemetry_source).toBe("simulator");
      expect(Number(row.gpu_util)).toBeGreaterThanOrEqual(40);
      expect(Number(row.gpu_util)).toBeLessThanOrEqual(100);
      expect(Number(row.storage_per_hour)).toBeGreaterThan(0);
    }
  });
});
