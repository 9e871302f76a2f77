/**
 * Stuck provisioning priced (issue 33, item 8): a dear rental stuck in created/loading is raised
 * sooner (LOADING_TIMEOUT_S × $1/h ÷ its price, never under 5 minutes) and told with what it has cost so far.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { events, instances } from "../../schema/index.ts";
import { raiseOverdueStates } from "../support/one-check.ts";
import { loadingTimeoutFor } from "../../fleet/instances/overdue-states.ts";
import { fleetFixture, MIN } from "./economics-fixture.ts";
import type { TestDeps } from "../support/test-deps.ts";

function setLoading(deps: TestDeps, id: string, pricePerHour: number | null) {
  return deps.db
    .update(instances)
    .set({ state: "loading", stateAt: deps.clock.now(), pricePerHour, expectedState: null, expectedUntil: null })
    .where(and(eq(instances.agentId, "default"), eq(instances.id, id)));
}

async function overdue(deps: TestDeps) {
  const rows = await deps.db.select().from(events).where(eq(events.source, "overdue")).orderBy(events.id);
  return rows.map((e) => e.payload as { instanceId: string; message: string; costSoFarUsd: number | null; timeoutS: number });
}

describe("stuck provisioning priced", () => {
  it("scales the loading timeout down for dear rentals, never under 5 minutes nor over LOADING_TIMEOUT_S", () => {
    const base = 900_000;
    expect(loadingTimeoutFor(base, null)).toBe(base);
    expect(loadingTimeoutFor(base, 0.5)).toBe(base);
    expect(loadingTimeoutFor(base, 2)).toBe(450_000);
    expect(loadingTimeoutFor(base, 23)).toBe(300_000);
  });

  it("raises a $24/h rental stuck loading after 5 minutes with its cost so far; a $0.40/h one waits LOADING_TIMEOUT_S", async () => {
    const { deps } = await fleetFixture();
    await setLoading(deps, "sim-1", 24);
    await setLoading(deps, "sim-2", 0.4);
    deps.clock.advance(4 * MIN);
    expect(await raiseOverdueStates(deps, "default")).toEqual([]);
    deps.clock.advance(2 * MIN);
    expect(await raiseOverdueStates(deps, "default")).toEqual(["sim-1"]);
    const [told] = await overdue(deps);
    expect(told).toMatchObject({ instanceId: "sim-1", costSoFarUsd: 2.4, timeoutS: 300 });
    expect(told!.message).toMatch(/loading for 360s, longer than its loading timeout \(300s.*\$24\/h\); it has cost about \$2\.40 so far/);
    // Raised once per stuck state.
    deps.clock.advance(MIN);
    await raiseOverdueStates(deps, "default");
    expect(await overdue(deps)).toHaveLength(1);
    deps.clock.advance(9 * MIN);
    await raiseOverdueStates(deps, "default");
    const all = await overdue(deps);
    expect(all.map((m) => m.instanceId)).toEqual(["sim-1", "sim-2"]);
    expect(all[1]).toMatchObject({ costSoFarUsd: 0.11, timeoutS: 900 });
    expect(all[1]!.message).toMatch(/longer than LOADING_TIMEOUT_S \(900s\); it has cost about \$0\.11 so far/);
  });
});
