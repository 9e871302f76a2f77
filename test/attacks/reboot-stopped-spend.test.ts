/**
 * Attack: over the daily spend limit, the rules or the model restart a stopped instance by a
 * reboot instead of a start, so billing starts again without the spend gate asking anyone.
 * Guard: fleet/actions/action-facts.ts `addsSpend` counts a reboot of a stopped or exited
 * instance as adding spend (like start, create, replace), so the spend-limit row of
 * fleet/actions/decide.ts files an approval; a reboot of a running instance adds nothing.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { approvals, instances, instanceSpend } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { fleetFixture } from "../actions/fleet-fixture.ts";

async function overLimit() {
  const fx = await fleetFixture({ APPROVAL_REQUIRED_ACTIONS: "none", SPEND_LIMIT_PER_DAY_USD: "1" });
  const { deps } = fx;
  const today = new Date(deps.clock.now()).toISOString().slice(0, 10);
  await deps.db.insert(instanceSpend).values({ agentId: "default", instanceId: "sim-1", day: today, usd: 5 });
  await deps.db.update(instances).set({ state: "stopped" }).where(eq(instances.id, "sim-2"));
  return fx;
}

describe("the spend limit counts anything that can start billing", () => {
  it("over the limit, a rules or LLM reboot of a stopped instance files an approval instead of rebooting", async () => {
    const { deps, provider } = await overLimit();
    for (const decidedBy of ["rules", "llm"] as const) {
      const result = await executeAction(deps, {
        agentId: "default",
        runId: null,
        instanceId: "sim-2",
        kind: "reboot",
        decidedBy,
        idempotencyKey: `reboot-stopped-${decidedBy}`,
      });
      expect(result.status).toBe("awaiting_approval");
    }
    expect(provider.calls).toEqual([]);
    const [asked] = await deps.db.select().from(approvals);
    expect(asked?.reason).toMatch(/daily limit/);
  });

  it("a reboot of a running instance adds no spend: it goes on over the limit", async () => {
    const { deps, provider } = await overLimit();
    const result = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-3",
      kind: "reboot",
      decidedBy: "rules",
      idempotencyKey: "reboot-running",
    });
    expect(result.status).toBe("succeeded");
    expect(provider.calls).toEqual(["reboot sim-3"]);
  });
});
