/**
 * The daily budget notices: a human is told once at 80 % and once at 100 % of
 * SPEND_LIMIT_PER_DAY_USD per UTC day (once-marks `budget:<day>:80|100`), never without a limit.
 */
import { describe, expect, it } from "vitest";
import { instanceSpend, onceNotices } from "../../schema/index.ts";
import { runEconomics } from "../support/one-check.ts";
import { fleetFixture, noticeTitles } from "./economics-fixture.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { utcDay } from "../../fleet/economics/spend.ts";

function spent(deps: TestDeps, usd: number, day = utcDay(deps.clock.now())) {
  return deps.db
    .insert(instanceSpend)
    .values({ agentId: "default", instanceId: "sim-1", day, usd })
    .onConflictDoUpdate({ target: [instanceSpend.agentId, instanceSpend.day, instanceSpend.instanceId], set: { usd } });
}

describe("budget notices", () => {
  it("tells a human once at 80 % and once at 100 %", async () => {
    const { deps } = await fleetFixture({ SPEND_LIMIT_PER_DAY_USD: "10" });
    await spent(deps, 7.9);
    expect((await runEconomics(deps, "default")).notices).toEqual([]);
    await spent(deps, 8.5);
    expect((await runEconomics(deps, "default")).notices).toEqual(["budget:2026-01-01:80"]);
    expect((await runEconomics(deps, "default")).notices).toEqual([]);
    await spent(deps, 10);
    expect((await runEconomics(deps, "default")).notices).toEqual(["budget:2026-01-01:100"]);
    await spent(deps, 14);
    expect((await runEconomics(deps, "default")).notices).toEqual([]);
    expect(await noticeTitles(deps)).toEqual(["Daily spend at 80 % of the limit", "Daily spend limit reached ($10.00)"]);
  });

  it("a jump straight past the limit sends only the 100 % notice, and marks 80 % as told", async () => {
    const { deps } = await fleetFixture({ SPEND_LIMIT_PER_DAY_USD: "10" });
    await spent(deps, 12);
    expect((await runEconomics(deps, "default")).notices).toEqual(["budget:2026-01-01:100"]);
    expect((await deps.db.select({ key: onceNotices.key }).from(onceNotices).orderBy(onceNotices.key)).map((r) => r.key)).toEqual([
      "budget:2026-01-01:100",
      "budget:2026-01-01:80",
    ]);
    expect(await runEconomics(deps, "default")).toMatchObject({ notices: [] });
    expect(await noticeTitles(deps)).toEqual(["Daily spend limit reached ($10.00)"]);
  });

  it("counts again on the next UTC day, and says nothing without a limit", async () => {
    const { deps } = await fleetFixture({ SPEND_LIMIT_PER_DAY_USD: "10" });
    await spent(deps, 9);
    await runEconomics(deps, "default");
    deps.clock.advance(24 * 3_600_000);
    await spent(deps, 9);
    expect((await runEconomics(deps, "default")).notices).toEqual(["budget:2026-01-02:80"]);

    const unlimited = await fleetFixture();
    await spent(unlimited.deps, 1e6);
    expect((await runEconomics(unlimited.deps, "default")).notices).toEqual([]);
  });
});
