/**
 * Renting costs money: at or over the daily spend limit a replacement always waits for a human,
 * even where APPROVAL_REQUIRED_ACTIONS does not name `replace` (the `addsSpend` fact, fleet/actions/action-facts.ts).
 * Under the limit, with replace not approval-gated, the rules policy's replacement goes ahead.
 */
import { describe, expect, it } from "vitest";
import { approvals, instanceSpend, simulatorInstances } from "../../schema/index.ts";
import { deadFleet, ruleRun, rows, tick } from "./support.ts";

describe("a replacement over the daily spend limit", () => {
  it("becomes an approval request and rents nothing; under the limit it rents", async () => {
    const { deps } = await deadFleet({ APPROVAL_REQUIRED_ACTIONS: "none", SPEND_LIMIT_PER_DAY_USD: "1" });
    const today = new Date(deps.clock.now()).toISOString().slice(0, 10);
    await deps.db.insert(instanceSpend).values({ agentId: "default", instanceId: "sim-2", day: today, usd: 5 });
    const before = (await deps.db.select().from(simulatorInstances)).length;
    await ruleRun(deps);
    const asked = await deps.db.select().from(approvals);
    expect(asked.map((a) => a.kind)).toEqual(["replace"]);
    expect(asked[0]!.reason).toMatch(/daily limit/);
    expect((await deps.db.select().from(simulatorInstances)).length).toBe(before);

    const { deps: under } = await deadFleet({ APPROVAL_REQUIRED_ACTIONS: "none", SPEND_LIMIT_PER_DAY_USD: "1000" });
    await ruleRun(under);
    expect(await under.db.select().from(approvals)).toEqual([]);
    expect((await rows(under)).map((r) => r.status)).toEqual(["approved"]);
    await tick(under); // the tick's replacement check is its only stepper: it rents
    expect((await rows(under))[0]?.createAttemptedAt).not.toBeNull();
  });
});
