/**
 * Spend accrual (fleet/economics/spend.ts): price × time per billed state, per UTC day, split at midnight,
 * and never the same interval twice (the spend_accrued_at compare-and-set).
 */
import { describe, expect, it } from "vitest";
import { instanceSpend } from "../../schema/index.ts";
import { runEconomics } from "../support/one-check.ts";
import { accrualStatements, planAccrual, ratePerHour, spendToday } from "../../fleet/economics/spend.ts";
import { fleetFixture, MIN, setInstance } from "./economics-fixture.ts";
import type { TestDeps } from "../support/test-deps.ts";

async function spendRows(deps: TestDeps) {
  const rows = await deps.db.select().from(instanceSpend).orderBy(instanceSpend.day, instanceSpend.instanceId);
  return rows.map((r) => ({ id: r.instanceId, day: r.day, usd: Math.round(r.usd * 1e6) / 1e6 }));
}

describe("spend accrual", () => {
  it("adds price × time running, storage × time stopped, at most 5 minutes before the first accrual, and nothing twice", async () => {
    const { deps } = await fleetFixture();
    const now = deps.clock.now();
    await setInstance(deps, "sim-1", { pricePerHour: 2, spendAccruedAt: now });
    await setInstance(deps, "sim-2", { state: "stopped", pricePerHour: 2, storagePerHour: 0.24, spendAccruedAt: now });
    await setInstance(deps, "sim-3", { pricePerHour: 3, spendAccruedAt: null });

    deps.clock.advance(30 * MIN);
    await runEconomics(deps, "default");
    await runEconomics(deps, "default");
    // sim-3 was never accrued: it starts at its state change, at most 5 minutes back (5 min × $3).
    expect(await spendRows(deps)).toEqual([
      { id: "sim-1", day: "2026-01-01", usd: 1 },
      { id: "sim-2", day: "2026-01-01", usd: 0.12 },
      { id: "sim-3", day: "2026-01-01", usd: 0.25 },
    ]);
    deps.clock.advance(30 * MIN);
    const report = await runEconomics(deps, "default");
    expect(await spendRows(deps)).toEqual([
      { id: "sim-1", day: "2026-01-01", usd: 2 },
      { id: "sim-2", day: "2026-01-01", usd: 0.24 },
      { id: "sim-3", day: "2026-01-01", usd: 1.75 },
    ]);
    expect(report.spendTodayUsd).toBe(3.99);
    expect(await spendToday(deps, "default")).toBeCloseTo(3.99, 6);
  });

  it("accrues at most every 5 minutes: the ticks between write nothing", async () => {
    const { deps } = await fleetFixture();
    await setInstance(deps, "sim-1", { pricePerHour: 60, spendAccruedAt: deps.clock.now() });
    deps.clock.advance(4 * MIN);
    await runEconomics(deps, "default");
    expect(await spendRows(deps)).toEqual([]);
    deps.clock.advance(MIN);
    await runEconomics(deps, "default");
    expect(await spendRows(deps)).toEqual([{ id: "sim-1", day: "2026-01-01", usd: 5 }]);
  });

  it("a new sighting waits 5 minutes from its state change like the others (a first tick writes only its start)", async () => {
    const { deps } = await fleetFixture();
    const now0 = deps.clock.now();
    await setInstance(deps, "sim-1", { pricePerHour: 60, stateAt: deps.clock.now(), spendAccruedAt: null });
    await setInstance(deps, "sim-2", { stateAt: deps.clock.now(), spendAccruedAt: null });
    await setInstance(deps, "sim-3", { stateAt: deps.clock.now(), spendAccruedAt: null });
    deps.clock.advance(MIN);
    await runEconomics(deps, "default");
    const { instances } = await import("../../schema/index.ts");
    expect((await deps.db.select({ at: instances.spendAccruedAt }).from(instances)).map((r) => r.at)).toEqual([now0, now0, now0]);
    deps.clock.advance(4 * MIN);
    await runEconomics(deps, "default");
    expect(await spendRows(deps)).toEqual([{ id: "sim-1", day: "2026-01-01", usd: 5 }]);
  });

  it("splits an interval at UTC midnight", async () => {
    const { deps } = await fleetFixture();
    deps.clock.set(Date.UTC(2026, 0, 1, 23, 30));
    await setInstance(deps, "sim-1", { pricePerHour: 1, spendAccruedAt: deps.clock.now() });
    deps.clock.advance(60 * MIN);
    await runEconomics(deps, "default");
    expect((await spendRows(deps)).filter((r) => r.id === "sim-1")).toEqual([
      { id: "sim-1", day: "2026-01-01", usd: 0.5 },
      { id: "sim-1", day: "2026-01-02", usd: 0.5 },
    ]);
  });

  it("a plan computed from a stale snapshot adds nothing (two ticks never count the same time)", async () => {
    const { deps } = await fleetFixture();
    const start = deps.clock.now();
    await setInstance(deps, "sim-1", { pricePerHour: 6, spendAccruedAt: start });
    const now = start + 10 * MIN;
    const plan = planAccrual(
      [{ id: "sim-1", state: "running", stateAt: 0, pricePerHour: 6, storagePerHour: null, spendAccruedAt: start }],
      now,
    );
    for (let i = 0; i < 2; i++) {
      const [first, ...rest] = accrualStatements(deps, "default", plan, now);
      await deps.db.batch([first!, ...rest]);
    }
    expect(await spendRows(deps)).toEqual([{ id: "sim-1", day: "2026-01-01", usd: 1 }]);
  });

  it("rates: rented states at pricePerHour, other existing states at storage, gone at nothing", () => {
    const prices = { pricePerHour: 2, storagePerHour: 0.1 };
    expect(["running", "loading", "rebooting", "exited"].map((state) => ratePerHour({ state, ...prices }))).toEqual([2, 2, 2, 2]);
    expect(["stopped", "created", "offline"].map((state) => ratePerHour({ state, ...prices }))).toEqual([0.1, 0.1, 0.1]);
    expect(ratePerHour({ state: "stopped", pricePerHour: 2, storagePerHour: null })).toBe(0);
    expect(ratePerHour({ state: "running", ...prices, goneAt: 1 })).toBe(0);
  });
});
