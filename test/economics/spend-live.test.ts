/**
 * Live, complete spend (issue 33, item 2): every read counts spend up to now, not only what the
 * tick accrued every 5 minutes, and a rental that went gone between two accruals is counted to its end.
 */
import { describe, expect, it } from "vitest";
import { instanceSpend } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders } from "../support/test-deps.ts";
import { runEconomics } from "../support/one-check.ts";
import { spendReport, spendToday } from "../../fleet/economics/spend.ts";
import { loadSpend } from "../../jobs/read-models/spend.ts";
import { fleetFixture, MIN, setInstance } from "./economics-fixture.ts";
import type { TestDeps } from "../support/test-deps.ts";

async function accruedRows(deps: TestDeps) {
  const rows = await deps.db.select().from(instanceSpend).orderBy(instanceSpend.instanceId);
  return rows.map((r) => ({ id: r.instanceId, usd: Math.round(r.usd * 1e6) / 1e6 }));
}

/** Every reader's figure for today: the gate's and notices' statement, the API, the dashboard's read model. */
async function everyRead(deps: TestDeps) {
  const api = await (await buildApp(() => deps).request("/api/agents/default/spend", { headers: authHeaders() })).json();
  return [await spendToday(deps, "default"), api.today.usd, (await loadSpend(deps, "default")).today];
}

describe("live spend", () => {
  it("60 s after a $23/h rental starts, every read shows rate × time (within 10 %), before any accrual", async () => {
    const { deps } = await fleetFixture();
    await setInstance(deps, "sim-1", { pricePerHour: 23, stateAt: deps.clock.now(), spendAccruedAt: null });
    await setInstance(deps, "sim-2", { pricePerHour: 0, spendAccruedAt: deps.clock.now() });
    await setInstance(deps, "sim-3", { pricePerHour: 0, spendAccruedAt: deps.clock.now() });
    deps.clock.advance(MIN);
    await runEconomics(deps, "default");
    expect(await accruedRows(deps)).toEqual([]);
    for (const usd of await everyRead(deps)) expect(Math.abs(usd - 23 / 60) / (23 / 60)).toBeLessThan(0.1);
    const report = await spendReport(deps, "default");
    expect(report.instances).toEqual([{ id: "sim-1", usdToday: 0.3833 }]);
  });

  it("reads the same before and after the tick writes it down (the read and the accrual are one rule)", async () => {
    const { deps } = await fleetFixture();
    deps.clock.set(Date.UTC(2026, 0, 1, 12));
    const start = deps.clock.now();
    await setInstance(deps, "sim-1", { pricePerHour: 6, spendAccruedAt: start });
    await setInstance(deps, "sim-2", {
      state: "stopped",
      pricePerHour: 6,
      storagePerHour: 0.6,
      stateAt: start - 60 * MIN,
      spendAccruedAt: null,
    });
    await setInstance(deps, "sim-3", { pricePerHour: 3, stateAt: start - 2 * MIN, spendAccruedAt: null, goneAt: start });
    deps.clock.advance(7 * MIN);
    const before = await everyRead(deps);
    // 7 min × $6 + 5 min × $0.60 + 2 min × $3 (gone at start, counted to its end).
    expect(before.map((usd) => Math.round(usd * 1e4) / 1e4)).toEqual([0.85, 0.85, 0.85]);
    await runEconomics(deps, "default");
    expect(await accruedRows(deps)).toEqual([
      { id: "sim-1", usd: 0.7 },
      // sim-2 is a new sighting: its first tick writes only its start; the reads still count it.
      { id: "sim-3", usd: 0.1 },
    ]);
    expect((await everyRead(deps)).map((usd) => Math.round(usd * 1e4) / 1e4)).toEqual([0.85, 0.85, 0.85]);
  });

  it("a rental destroyed 3 minutes after start is counted to its end, once", async () => {
    const { deps } = await fleetFixture();
    const start = deps.clock.now();
    for (const id of ["sim-2", "sim-3"]) await setInstance(deps, id, { pricePerHour: 0, spendAccruedAt: start });
    await setInstance(deps, "sim-1", { pricePerHour: 40, stateAt: start, spendAccruedAt: null });
    deps.clock.advance(MIN / 2);
    await runEconomics(deps, "default");
    deps.clock.advance(MIN * 2.5);
    // What a successful destroy records: gone now, and `offline` from now (so the running stretch is priced as rented).
    await setInstance(deps, "sim-1", { goneAt: deps.clock.now(), state: "offline", stateAt: deps.clock.now(), storagePerHour: 0.1 });
    deps.clock.advance(20 * MIN);
    expect(await spendToday(deps, "default")).toBeCloseTo(2, 6);
    await runEconomics(deps, "default");
    await runEconomics(deps, "default");
    expect(await accruedRows(deps)).toEqual([{ id: "sim-1", usd: 2 }]);
    deps.clock.advance(10 * MIN);
    await runEconomics(deps, "default");
    expect(await accruedRows(deps)).toEqual([{ id: "sim-1", usd: 2 }]);
    expect(await spendToday(deps, "default")).toBeCloseTo(2, 6);
  });

  it("an instance the reconcile marks gone between accruals is counted up to then at its last state's rate", async () => {
    const { deps } = await fleetFixture();
    const start = deps.clock.now();
    for (const id of ["sim-2", "sim-3"]) await setInstance(deps, id, { pricePerHour: 0, spendAccruedAt: start });
    await setInstance(deps, "sim-1", { pricePerHour: 12, spendAccruedAt: start });
    deps.clock.advance(4 * MIN);
    await setInstance(deps, "sim-1", { goneAt: deps.clock.now() });
    deps.clock.advance(30 * MIN);
    await runEconomics(deps, "default");
    expect(await accruedRows(deps)).toEqual([{ id: "sim-1", usd: 0.8 }]);
    expect((await spendReport(deps, "default")).today).toMatchObject({ usd: 0.8, burnPerHour: 0 });
  });
});
