/**
 * Idle detection (fleet/economics/idle.ts) and its rules in the economics check: told once per idle
 * episode, never on missing or stale telemetry, again only after work resumed and a new episode
 * began; stopped after the agent's idle-stop delay, once per episode, through an approval when
 * `stop` needs one.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actions, approvals, onceNotices } from "../../schema/index.ts";
import { idleState } from "../../fleet/economics/idle.ts";
import { runEconomics } from "../support/one-check.ts";
import { testConfig } from "../support/test-deps.ts";
import { fleetFixture, MIN, noticeTitles, setInstance } from "./economics-fixture.ts";
import type { TestDeps } from "../support/test-deps.ts";

const economics = testConfig().economics;
const NOW = Date.UTC(2026, 0, 1, 12);
const fresh = { state: "running", gpuUtil: 0, gpuUtilAt: NOW - MIN, idleSince: NOW - 31 * MIN, telemetrySource: "vast" };

describe("idleState", () => {
  it("names the signal and its source when idle", () => {
    expect(idleState(fresh, NOW, economics)).toEqual({ idle: true, forMs: 31 * MIN, signal: "gpu_util 0 % for 31 min, from Vast.ai" });
  });
  it("is not idle without telemetry, and says so", () => {
    expect(idleState({ ...fresh, gpuUtil: null, gpuUtilAt: null }, NOW, economics)).toEqual({
      idle: false,
      forMs: 0,
      signal: "gpu_util never reported: not judged idle",
    });
  });
  it("is not idle on stale telemetry (older than TELEMETRY_STALE_S)", () => {
    const stale = idleState({ ...fresh, gpuUtilAt: NOW - 11 * MIN }, NOW, economics);
    expect(stale.idle).toBe(false);
    expect(stale.signal).toBe("gpu_util 0 % is stale (11 min old, from Vast.ai): not judged idle");
  });
  it("is not idle once work resumed or when not running", () => {
    expect(idleState({ ...fresh, gpuUtil: 80, idleSince: null }, NOW, economics).idle).toBe(false);
    expect(idleState({ ...fresh, state: "stopped" }, NOW, economics).idle).toBe(false);
  });
});

async function idle(deps: TestDeps, id: string, idleForMin: number, telemetry: Partial<typeof fresh> = {}) {
  const now = deps.clock.now();
  await setInstance(deps, id, {
    gpuUtil: 1,
    gpuUtilAt: now - MIN,
    idleSince: now - idleForMin * MIN,
    telemetrySource: "simulator",
    pricePerHour: 1.5,
    ...telemetry,
  });
}

describe("the idle notice", () => {
  it("tells a human once per idle episode, naming the signal", async () => {
    const { deps } = await fleetFixture();
    await idle(deps, "sim-1", 31);
    await idle(deps, "sim-2", 29);
    const first = await runEconomics(deps, "default");
    deps.clock.advance(5 * MIN);
    await setInstance(deps, "sim-1", { gpuUtilAt: deps.clock.now() - MIN });
    const second = await runEconomics(deps, "default");
    const idleSince = deps.clock.now() - 5 * MIN - 31 * MIN;
    expect(first.notices).toEqual([`idle:sim-1:${idleSince}`]);
    // sim-2 crossed 30 min meanwhile (its telemetry is now 6 min old, still fresh).
    expect(second.notices).toEqual([expect.stringMatching(/^idle:sim-2:/)]);
    expect(await noticeTitles(deps)).toEqual(["Instance sim-1 is idle", "Instance sim-2 is idle"]);
    const [row] = await deps.db
      .select()
      .from(onceNotices)
      .where(eq(onceNotices.key, `idle:sim-1:${idleSince}`));
    expect(row?.notificationId).toEqual(expect.any(Number));
  });

  it("tells nobody without telemetry or on stale telemetry", async () => {
    const { deps } = await fleetFixture();
    await idle(deps, "sim-1", 60, { gpuUtil: null as never, gpuUtilAt: null as never });
    await idle(deps, "sim-2", 60, { gpuUtilAt: deps.clock.now() - 11 * MIN });
    expect((await runEconomics(deps, "default")).notices).toEqual([]);
    expect(await noticeTitles(deps)).toEqual([]);
  });

  it("work resuming ends the episode; the next one is told again", async () => {
    const { deps } = await fleetFixture();
    await idle(deps, "sim-1", 31);
    await runEconomics(deps, "default");
    deps.clock.advance(MIN);
    await setInstance(deps, "sim-1", { gpuUtil: 90, gpuUtilAt: deps.clock.now(), idleSince: null });
    expect((await runEconomics(deps, "default")).notices).toEqual([]);
    deps.clock.advance(40 * MIN);
    await idle(deps, "sim-1", 31);
    expect((await runEconomics(deps, "default")).notices).toHaveLength(1);
    expect(await noticeTitles(deps)).toEqual(["Instance sim-1 is idle", "Instance sim-1 is idle"]);
  });

  it("two ticks deciding from the same snapshot send it once (the second batch's once-mark conflicts)", async () => {
    const { deps } = await fleetFixture();
    await idle(deps, "sim-1", 31);
    const { checkEconomics } = await import("../../fleet/economics/economics-check.ts");
    const { batchByName } = await import("../../db/named-batch.ts");
    const now = deps.clock.now();
    const rows = await batchByName(deps.db, checkEconomics.reads(deps, "default", now));
    const tick = { now, reconciled: new Set<string>() };
    const [a, b] = await Promise.all([
      checkEconomics.decide(deps, "default", rows, tick),
      checkEconomics.decide(deps, "default", rows, tick),
    ]);
    await deps.db.batch(a.statements as [never]);
    await expect(deps.db.batch(b.statements as [never])).rejects.toThrow(/UNIQUE|constraint/i);
    expect(await noticeTitles(deps)).toEqual(["Instance sim-1 is idle"]);
  });
});

describe("the idle stop", () => {
  it("is off by default (IDLE_STOP_AFTER_S = 0)", async () => {
    const { deps, provider } = await fleetFixture();
    await idle(deps, "sim-1", 600);
    expect((await runEconomics(deps, "default")).stopped).toEqual([]);
    expect(provider.calls).toEqual([]);
  });

  it("stops an instance idle past the delay, once per episode, decided by rules", async () => {
    const { deps, provider } = await fleetFixture({ IDLE_STOP_AFTER_S: "3600" });
    await idle(deps, "sim-1", 61);
    await idle(deps, "sim-2", 59);
    expect((await runEconomics(deps, "default")).stopped).toEqual([{ instanceId: "sim-1", status: "succeeded" }]);
    // The view still says running (no report yet): the episode's key stops a second call.
    expect((await runEconomics(deps, "default")).stopped).toEqual([]);
    expect(provider.calls).toEqual(["stop sim-1"]);
    const [action] = await deps.db.select().from(actions);
    expect(action).toMatchObject({ kind: "stop", decidedBy: "rules", instanceId: "sim-1", status: "succeeded" });
    expect(action!.reason).toContain("gpu_util 1 % for 61 min, from the simulator");
  });

  it("files one approval instead when stop needs one", async () => {
    const { deps, provider } = await fleetFixture({ IDLE_STOP_AFTER_S: "3600", APPROVAL_REQUIRED_ACTIONS: "stop,destroy" });
    await idle(deps, "sim-1", 61);
    expect((await runEconomics(deps, "default")).stopped).toEqual([{ instanceId: "sim-1", status: "awaiting_approval" }]);
    deps.clock.advance(MIN);
    await setInstance(deps, "sim-1", { gpuUtilAt: deps.clock.now() });
    await runEconomics(deps, "default");
    expect(provider.calls).toEqual([]);
    expect(await deps.db.select({ kind: approvals.kind, status: approvals.status }).from(approvals)).toEqual([
      { kind: "stop", status: "pending" },
    ]);
  });
});
