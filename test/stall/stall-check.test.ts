/**
 * Stall detection (fleet/instances/stall.ts) and the tick's stall check (fleet/instances/stall-check.ts):
 * a busy instance with frozen progress is told stalled once per episode, naming the signal; moving
 * progress and never-reported progress never; the STALL_ACTION goes through the action table,
 * approval-gated by default; at most STALLS_PER_TICK instances a tick.
 */
import { describe, expect, it } from "vitest";
import { actions, approvals, instances, onceNotices } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { checkStalls, STALLS_PER_TICK, type StallReport } from "../../fleet/instances/stall-check.ts";
import { stallState } from "../../fleet/instances/stall.ts";
import { testConfig, type TestDeps } from "../support/test-deps.ts";
import { fleetFixture, MIN, noticeTitles, setInstance } from "../economics/economics-fixture.ts";

const NOW = Date.UTC(2026, 0, 1, 12);
const settings = { afterMs: 30 * MIN, idleGpuUtilPct: testConfig().economics.idleGpuUtilPct, telemetryStaleMs: 10 * MIN };
const frozen = {
  state: "running",
  progress: 1200,
  progressAt: NOW - MIN,
  progressMovedAt: NOW - 31 * MIN,
  gpuUtil: 97,
  gpuUtilAt: NOW - MIN,
};

describe("stallState", () => {
  it("a busy instance whose progress is frozen is a hang, naming the signal", () => {
    expect(stallState(frozen, NOW, settings)).toEqual({
      stalled: true,
      forMs: 31 * MIN,
      kind: "hang",
      signal: "GPU 97 %, progress 1200 unchanged for 31 min",
    });
  });
  it("an idle GPU with frozen progress is stalled too", () => {
    expect(stallState({ ...frozen, gpuUtil: 0 }, NOW, settings)).toMatchObject({ stalled: true, kind: "idle" });
  });
  it("never stalled without progress, before STALL_AFTER_S, on a stale reading, or when not running", () => {
    expect(stallState({ ...frozen, progress: null, progressAt: null, progressMovedAt: null }, NOW, settings).stalled).toBe(false);
    // A row read without the progress columns (undefined) never reported progress either.
    const { progress: _p, progressAt: _a, progressMovedAt: _m, ...without } = frozen;
    expect(stallState(without as typeof frozen, NOW, settings).stalled).toBe(false);
    expect(stallState({ ...frozen, progressMovedAt: NOW - 29 * MIN }, NOW, settings).stalled).toBe(false);
    expect(stallState({ ...frozen, progressAt: NOW - 11 * MIN }, NOW, settings).stalled).toBe(false);
    expect(stallState({ ...frozen, state: "stopped" }, NOW, settings).stalled).toBe(false);
  });
});

const stalls = (deps: TestDeps) => runTickCheck<StallReport, TestDeps>(deps, "default", checkStalls);

async function freeze(deps: TestDeps, id: string, frozenForMin: number, extra: Partial<typeof instances.$inferInsert> = {}) {
  const now = deps.clock.now();
  await setInstance(deps, id, {
    progress: 1200,
    progressAt: now - MIN,
    progressMovedAt: now - frozenForMin * MIN,
    gpuUtil: 97,
    gpuUtilAt: now - MIN,
    pricePerHour: 2,
    ...extra,
  });
}

describe("the stall check", () => {
  it("tells a busy instance with frozen progress once; a second tick sends no second notice", async () => {
    const { deps, provider } = await fleetFixture();
    await freeze(deps, "sim-1", 31);
    const first = await stalls(deps);
    deps.clock.advance(MIN);
    await setInstance(deps, "sim-1", { progressAt: deps.clock.now() });
    const second = await stalls(deps);
    expect(first).toEqual({ told: ["sim-1"], acted: [] });
    expect(second).toEqual({ told: [], acted: [] });
    const titles = await noticeTitles(deps);
    expect(titles).toEqual(["Instance sim-1 is stalled"]);
    const [notice] = await deps.db.$client.execute("select body from notifications").then((r) => r.rows);
    expect(notice!.body).toContain("GPU 97 %, progress 1200 unchanged for 31 min");
    expect(await deps.db.select({ key: onceNotices.key }).from(onceNotices)).toEqual([
      { key: `stall:sim-1:${deps.clock.now() - MIN - 31 * MIN}` },
    ]);
    // STALL_ACTION defaults to none: nothing is done to it.
    expect(provider.calls).toEqual([]);
    expect(await deps.db.select().from(actions)).toEqual([]);
  });

  it("moving progress is never stalled; never-reported progress never", async () => {
    const { deps } = await fleetFixture();
    await freeze(deps, "sim-1", 5);
    await setInstance(deps, "sim-2", { gpuUtil: 97, gpuUtilAt: deps.clock.now() - MIN });
    for (let i = 0; i < 4; i++) {
      expect(await stalls(deps)).toEqual({ told: [], acted: [] });
      deps.clock.advance(10 * MIN);
      // sim-1's counter keeps growing.
      await setInstance(deps, "sim-1", { progress: 1300 + i, progressAt: deps.clock.now(), progressMovedAt: deps.clock.now() });
      await setInstance(deps, "sim-2", { gpuUtilAt: deps.clock.now() });
    }
    expect(await noticeTitles(deps)).toEqual([]);
  });

  it("a new episode (progress moved, then froze again) is told again", async () => {
    const { deps } = await fleetFixture();
    await freeze(deps, "sim-1", 31);
    await stalls(deps);
    deps.clock.advance(MIN);
    await freeze(deps, "sim-1", 0, { progress: 1500 });
    expect((await stalls(deps)).told).toEqual([]);
    deps.clock.advance(31 * MIN);
    await setInstance(deps, "sim-1", { progressAt: deps.clock.now(), gpuUtilAt: deps.clock.now() });
    expect((await stalls(deps)).told).toEqual(["sim-1"]);
    expect(await noticeTitles(deps)).toEqual(["Instance sim-1 is stalled", "Instance sim-1 is stalled"]);
  });

  it("STALL_ACTION=reboot goes through the action table, filed as an approval by default, once per episode", async () => {
    const { deps, provider } = await fleetFixture({ STALL_ACTION: "reboot" });
    await freeze(deps, "sim-1", 31);
    expect((await stalls(deps)).acted).toEqual([{ instanceId: "sim-1", kind: "reboot", status: "awaiting_approval" }]);
    expect((await stalls(deps)).acted).toEqual([]);
    expect(provider.calls).toEqual([]);
    const [action] = await deps.db.select().from(actions);
    expect(action).toMatchObject({ kind: "reboot", decidedBy: "rules", instanceId: "sim-1", status: "awaiting_approval" });
    expect(action!.reason).toContain("GPU 97 %, progress 1200 unchanged for 31 min");
    expect(await deps.db.select({ kind: approvals.kind, status: approvals.status }).from(approvals)).toEqual([
      { kind: "reboot", status: "pending" },
    ]);
  });

  it("STALL_ACTION_APPROVAL=false reboots without asking (the action table allowing it)", async () => {
    const { deps, provider } = await fleetFixture({ STALL_ACTION: "reboot", STALL_ACTION_APPROVAL: "false" });
    await freeze(deps, "sim-1", 31);
    expect((await stalls(deps)).acted).toEqual([{ instanceId: "sim-1", kind: "reboot", status: "succeeded" }]);
    expect((await stalls(deps)).acted).toEqual([]);
    expect(provider.calls).toEqual(["reboot sim-1"]);
  });

  it(`handles at most ${STALLS_PER_TICK} stalled instances a tick; the rest next tick`, async () => {
    const { deps } = await fleetFixture();
    const now = deps.clock.now();
    await deps.db.insert(instances).values(
      Array.from({ length: STALLS_PER_TICK + 5 }, (_, i) => ({
        agentId: "default",
        id: `many-${String(i).padStart(2, "0")}`,
        state: "running",
        stateAt: now - 60 * MIN,
        lastSeenAt: now,
        updatedAt: now,
        progress: 7,
        progressAt: now - MIN,
        progressMovedAt: now - 40 * MIN,
        gpuUtil: 99,
        gpuUtilAt: now - MIN,
      })),
    );
    expect((await stalls(deps)).told).toHaveLength(STALLS_PER_TICK);
    expect((await stalls(deps)).told).toHaveLength(5);
    expect((await stalls(deps)).told).toHaveLength(0);
    expect(await noticeTitles(deps)).toHaveLength(STALLS_PER_TICK + 5);
  });
});
