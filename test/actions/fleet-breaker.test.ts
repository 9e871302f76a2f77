/**
 * The fleet-fraction breaker (fleet/actions/fleet-breaker.ts, issue #33 item 9): when more than
 * MAX_UNHEALTHY_PCT of the agent's instances are dead, each seen so twice 60 s apart, the rules'
 * restarts become approvals instead of provider calls, the watchdog tells a human once and shows
 * the hold on the health route; under the share, or once a human lifts the hold, they run again.
 */
import { inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { instances, notifications } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { liftFleetBreaker } from "../../fleet/actions/fleet-breaker.ts";
import { readHealth } from "../../agent/watchdog/watchdog.ts";
import { watchLoop } from "../support/one-check.ts";
import { fleetOfTen, restart, seenAgain, type Fleet } from "./fleet-of-ten.ts";

const breakerNotices = ({ deps }: Fleet) =>
  deps.db
    .select()
    .from(notifications)
    .then((rows) => rows.filter((r) => r.title.includes("fleet breaker")));

describe("the fleet-fraction breaker", () => {
  it("4 of 10 offline, seen twice 60 s apart: rules restarts do not run, a human is told once, the health route shows it", async () => {
    const fleet = await fleetOfTen(4);
    // One observation is no outage yet: a restart runs (of a live one, so the share stays 4 of 10).
    expect((await restart(fleet, "sim-10")).status).toBe("succeeded");
    await seenAgain(fleet, 60);
    for (const id of ["sim-1", "sim-2", "sim-3"]) expect((await restart(fleet, id)).status).toBe("awaiting_approval");
    expect(fleet.provider.calls).toEqual(["reboot sim-10"]);

    expect((await watchLoop(fleet.deps, "default")).started).toEqual(["fleet_breaker_open"]);
    await seenAgain(fleet, 60);
    await watchLoop(fleet.deps, "default");
    expect(await breakerNotices(fleet)).toHaveLength(1);
    const health = await readHealth(fleet.deps, "default");
    expect(health.conditions.map((c) => c.kind)).toEqual(["fleet_breaker_open"]);
    expect(health.conditions[0]!.detail).toMatch(/4 of 10 instances/);

    // A human's own action still goes.
    const human = await executeAction(fleet.deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-4",
      kind: "reboot",
      decidedBy: "human",
      operator: "alice",
      idempotencyKey: "alice-reboot",
    });
    expect(human.status).toBe("succeeded");
  });

  it("back under the share, restarts resume and the condition clears", async () => {
    const fleet = await fleetOfTen(4);
    await seenAgain(fleet, 60);
    await watchLoop(fleet.deps, "default");
    expect((await restart(fleet, "sim-1")).status).toBe("awaiting_approval");
    await fleet.deps.db
      .update(instances)
      .set({ state: "running" })
      .where(inArray(instances.id, ["sim-3", "sim-4"]));
    expect((await restart(fleet, "sim-2")).status).toBe("succeeded");
    expect((await watchLoop(fleet.deps, "default")).cleared).toEqual(["fleet_breaker_open"]);
    expect((await readHealth(fleet.deps, "default")).ok).toBe(true);
  });

  it("a human lifting the hold lets remediation run while the share is still over", async () => {
    const fleet = await fleetOfTen(4);
    await seenAgain(fleet, 60);
    await watchLoop(fleet.deps, "default");
    expect((await restart(fleet, "sim-1")).status).toBe("awaiting_approval");
    await liftFleetBreaker(fleet.deps, "default");
    expect((await restart(fleet, "sim-2")).status).toBe("succeeded");
  });

  it("1 of 10 offline is a death, not an outage: restarts run", async () => {
    const fleet = await fleetOfTen(1);
    await seenAgain(fleet, 120);
    expect((await restart(fleet, "sim-1")).status).toBe("succeeded");
    expect((await watchLoop(fleet.deps, "default")).started).toEqual([]);
  });
});
