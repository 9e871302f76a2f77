/**
 * The shared scenario of a lease that runs out (issue 35, item 2; fleet/leases/lease-expiry.ts), on
 * both hosts: a lease on one of the pages scenario's bulk instances, its owner an operator, ended a
 * moment ago with LEASE_GRACE_S 0 for the agent. The cron tick tells it once, stops the instance
 * through the action table (the simulated provider says stopped) and ends the lease `expired`; a
 * second tick does nothing more.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { leases, operators } from "../../schema/index.ts";
import { api, cron, idle, settleUntil, type ScenarioHost } from "./driver.ts";
import { providerRow } from "./provider-side.ts";

const LEASED = "sim-x-0041";

async function leaseNotices(host: ScenarioHost) {
  const { notifications } = await api(host, "GET", "/api/agents/default/notifications?limit=200");
  // The lease's own notice, and the stop's money-move notice (its body names the lease).
  return (notifications as { title: string; body: string }[])
    .filter((n) => n.title.includes(LEASED) && /lease/i.test(`${n.title} ${n.body}`))
    .map((n) => n.title);
}

export function defineLeaseScenario(getHost: () => ScenarioHost) {
  describe("a lease that runs out", () => {
    it("is told, its instance stopped after the grace and the lease ended, once", async () => {
      const host = getHost();
      const now = Date.now();
      await host.db
        .insert(operators)
        .values({ name: "lease-owner", role: "operator", tokenHash: "scenario-lease-owner", createdBy: "admin", createdAt: now });
      await api(host, "PATCH", "/api/agents/default", { settings: { leaseGraceS: 0 } });
      try {
        await host.db.insert(leases).values({
          agentId: "default",
          instanceId: LEASED,
          owner: "lease-owner",
          client: "scenario",
          purpose: "lease scenario",
          endsAt: now - 1000,
          createdAt: now,
          updatedAt: now,
        });
        await cron(host);
        await settleUntil(host, () => idle(host));
        expect((await providerRow(host, LEASED))?.state).toBe("stopped");
        const [row] = await host.db
          .select()
          .from(leases)
          .where(and(eq(leases.agentId, "default"), eq(leases.instanceId, LEASED)));
        expect(row).toMatchObject({ endReason: "expired" });
        const told = await leaseNotices(host);
        expect(told.sort()).toEqual([
          `Lease on instance ${LEASED} ran out`,
          expect.stringMatching(new RegExp(`^Stopped ${LEASED}: saves \\$`)),
        ]);

        await cron(host);
        await settleUntil(host, () => idle(host));
        expect(await leaseNotices(host)).toHaveLength(2);
      } finally {
        await api(host, "PATCH", "/api/agents/default", { settings: { leaseGraceS: null } });
      }
    });
  });
}
