/**
 * Telemetry by webhook: `gpuUtil` and `diskUsedPct` (0-100) are stored with the report, a
 * heartbeat's too, as the instance's latest figures and one sample; the idle mark follows the
 * samples; bad figures are a 400 naming the field with nothing written; a repeated webhook-id
 * writes no second sample; the sample costs no round trip of its own.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { buildApp } from "../../functions/app.ts";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { countingClient } from "../support/counting-client.ts";
import { SAMPLE_EVERY_MS } from "../../fleet/instances/telemetry.ts";

async function setUp(db?: TestDeps["db"]) {
  const deps = await createTestDeps({ ...(db ? { db } : {}), vars: { IDLE_GPU_UTIL_PCT: "5" } });
  return { deps, app: buildApp(() => deps) };
}

const report = (app: ReturnType<typeof buildApp>, id: string, body: Record<string, unknown>) =>
  app.request("/webhooks/default/instances", signedWebhook(id, { instanceId: "gpu-1", state: "running", ...body }));

const rows = async (deps: TestDeps, sql: string) => (await deps.db.$client.execute(sql)).rows;
const instanceRow = async (deps: TestDeps) =>
  (await rows(deps, "select gpu_util, gpu_util_at, disk_used_pct, telemetry_source, idle_since from instances where id = 'gpu-1'"))[0]!;
const samples = async (deps: TestDeps) => Number((await rows(deps, "select count(*) as n from instance_telemetry"))[0]!.n);

describe("instance webhook telemetry", () => {
  it("stores gpuUtil and diskUsedPct on the instance and as one sample, heartbeats included", async () => {
    const { deps, app } = await setUp();
    expect((await report(app, "t1", { gpuUtil: 73.5, diskUsedPct: 41 })).status).toBe(202);
    expect(await instanceRow(deps)).toMatchObject({
      gpu_util: 73.5,
      gpu_util_at: deps.clock.now(),
      disk_used_pct: 41,
      telemetry_source: "webhook",
      idle_since: null,
    });
    deps.clock.advance(SAMPLE_EVERY_MS);
    // The same state again: a heartbeat, which wakes nobody, still carries its figures.
    const beat = await report(app, "t2", { gpuUtil: 88 });
    expect(await beat.json()).toMatchObject({ outcome: "unchanged" });
    expect(await instanceRow(deps)).toMatchObject({ gpu_util: 88, gpu_util_at: deps.clock.now(), disk_used_pct: 41 });
    expect(await rows(deps, "select gpu_util, disk_used_pct, source, at from instance_telemetry order by id")).toEqual([
      expect.objectContaining({ gpu_util: 73.5, disk_used_pct: 41, source: "webhook" }),
      expect.objectContaining({ gpu_util: 88, disk_used_pct: null, source: "webhook", at: deps.clock.now() }),
    ]);
  });

  it("a report without figures writes no sample and keeps the stored ones", async () => {
    const { deps, app } = await setUp();
    await report(app, "n1", { gpuUtil: 50 });
    deps.clock.advance(1000);
    await report(app, "n2", {});
    expect(await samples(deps)).toBe(1);
    expect((await instanceRow(deps)).gpu_util).toBe(50);
  });

  it("idleSince is set by the first sample below IDLE_GPU_UTIL_PCT, kept by the next, cleared by a busy one or a stop", async () => {
    const { deps, app } = await setUp();
    await report(app, "i1", { gpuUtil: 60 });
    deps.clock.advance(60_000);
    const idleAt = deps.clock.now();
    await report(app, "i2", { gpuUtil: 2 });
    expect((await instanceRow(deps)).idle_since).toBe(idleAt);
    deps.clock.advance(60_000);
    await report(app, "i3", { gpuUtil: 0 });
    expect((await instanceRow(deps)).idle_since).toBe(idleAt);
    deps.clock.advance(60_000);
    await report(app, "i4", { gpuUtil: 5 });
    expect((await instanceRow(deps)).idle_since).toBeNull();
    deps.clock.advance(60_000);
    await report(app, "i5", { gpuUtil: 1 });
    expect((await instanceRow(deps)).idle_since).toBe(deps.clock.now());
    deps.clock.advance(60_000);
    await report(app, "i6", { state: "stopped" });
    expect((await instanceRow(deps)).idle_since).toBeNull();
  });

  it("a sample dated before the stored one changes neither the latest figure nor the idle mark", async () => {
    const { deps, app } = await setUp();
    deps.clock.advance(10 * 60_000);
    await report(app, "o1", { gpuUtil: 1 });
    const idleAt = deps.clock.now();
    await report(app, "o2", { gpuUtil: 90, at: new Date(idleAt - 5 * 60_000).toISOString() });
    expect(await instanceRow(deps)).toMatchObject({ gpu_util: 1, idle_since: idleAt });
  });

  it("a repeated webhook-id writes no second sample", async () => {
    const { deps, app } = await setUp();
    await report(app, "d1", { gpuUtil: 40 });
    deps.clock.advance(SAMPLE_EVERY_MS + 1000);
    expect((await report(app, "d1", { gpuUtil: 40 })).status).toBe(200);
    expect(await samples(deps)).toBe(1);
    expect((await instanceRow(deps)).gpu_util_at).toBe(deps.clock.now() - SAMPLE_EVERY_MS - 1000);
  });

  it("bound: a chatty instance writes one sample row per SAMPLE_EVERY_MS, while its row takes every report", async () => {
    const { deps, app } = await setUp();
    for (let i = 0; i < 30; i++) {
      await report(app, `c${i}`, { gpuUtil: 50 + i });
      deps.clock.advance(20_000); // a heartbeat every 20 s for 10 minutes
    }
    expect(await samples(deps)).toBe(2);
    expect((await instanceRow(deps)).gpu_util).toBe(79);
  });

  it.each([
    ["gpuUtil", 101],
    ["gpuUtil", -1],
    ["gpuUtil", "50"],
    ["gpuUtil", null],
    ["diskUsedPct", 100.5],
    ["diskUsedPct", true],
  ])("%s = %j is a 400 naming the field, and nothing is written", async (field, value) => {
    const { deps, app } = await setUp();
    const res = await report(app, "bad", { [field]: value });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toContain(field);
    for (const table of ["events", "instances", "instance_telemetry"]) {
      expect(Number((await rows(deps, `select count(*) as n from ${table}`))[0]!.n)).toBe(0);
    }
  });

  it("a report with telemetry costs the round trips of one without", async () => {
    const { client, counter } = countingClient(createClient({ url: ":memory:" }));
    const db = openDatabase(client);
    await applyMigrations(db);
    const { deps, app } = await setUp(db);
    await report(app, "warm", {});
    deps.clock.advance(1000);
    counter.reset();
    await report(app, "plain", {});
    const plain = counter.calls;
    deps.clock.advance(1000);
    counter.reset();
    await report(app, "measured", { gpuUtil: 12, diskUsedPct: 30 });
    expect(counter.calls).toBe(plain);
    expect(await samples(deps)).toBe(1);
  });
});

describe("instance webhook: outbid", () => {
  it("reason outbid with state stopped is carried in the event's payload", async () => {
    const { deps, app } = await setUp();
    await report(app, "r1", {});
    deps.clock.advance(1000);
    expect((await report(app, "r2", { state: "stopped", reason: "outbid" })).status).toBe(202);
    const [event] = await rows(deps, "select payload from events where dedup_key = 'webhook:r2'");
    expect(JSON.parse(String(event!.payload))).toMatchObject({ state: "stopped", reason: "outbid" });
  });

  it("a reason with another state, or another reason, is a 400 naming reason", async () => {
    const { deps, app } = await setUp();
    for (const body of [{ reason: "outbid" }, { state: "stopped", reason: "tired" }]) {
      const res = await report(app, "r3", body);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toContain("reason");
    }
    expect(Number((await rows(deps, "select count(*) as n from events"))[0]!.n)).toBe(0);
  });
});
