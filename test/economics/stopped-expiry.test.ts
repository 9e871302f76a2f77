/**
 * Stopped too long (STOPPED_DESTROY_AFTER_S): one approval request to destroy per stopped
 * episode, stating the storage cost per day; a contract ending within EXPIRY_WARN_S: told once.
 */
import { describe, expect, it } from "vitest";
import { approvals } from "../../schema/index.ts";
import { runEconomics } from "../support/one-check.ts";
import { fleetFixture, MIN, noticeTitles, setInstance } from "./economics-fixture.ts";

const HOUR = 60 * MIN;

describe("stopped too long", () => {
  it("asks once to destroy an instance stopped past the delay, stating its storage cost per day", async () => {
    const { deps, provider } = await fleetFixture({ STOPPED_DESTROY_AFTER_S: "86400" });
    const now = deps.clock.now();
    await setInstance(deps, "sim-1", { state: "stopped", stateAt: now - 25 * HOUR, storagePerHour: 0.1 });
    await setInstance(deps, "sim-2", { state: "stopped", stateAt: now - 23 * HOUR, storagePerHour: 0.1 });
    expect((await runEconomics(deps, "default")).destroyRequests).toEqual([{ instanceId: "sim-1", status: "awaiting_approval" }]);
    deps.clock.advance(10 * MIN);
    expect((await runEconomics(deps, "default")).destroyRequests).toEqual([]);
    const rows = await deps.db.select().from(approvals);
    expect(rows).toEqual([expect.objectContaining({ kind: "destroy", instanceId: "sim-1", requestedBy: "rules", status: "pending" })]);
    expect(rows[0]!.reason).toContain("its storage costs $2.40/day");
    expect(provider.calls).toEqual([]);
  });

  it("is off by default", async () => {
    const { deps } = await fleetFixture();
    await setInstance(deps, "sim-1", { state: "stopped", stateAt: deps.clock.now() - 1000 * HOUR });
    expect((await runEconomics(deps, "default")).destroyRequests).toEqual([]);
  });
});

describe("contract expiry", () => {
  it("tells a human once when the contract ends within EXPIRY_WARN_S, again only for a new end", async () => {
    const { deps } = await fleetFixture();
    const now = deps.clock.now();
    await setInstance(deps, "sim-1", { endsAt: now + 2 * HOUR });
    await setInstance(deps, "sim-2", { endsAt: now + 30 * HOUR });
    expect((await runEconomics(deps, "default")).notices).toEqual([`expiry:sim-1:${now + 2 * HOUR}`]);
    deps.clock.advance(HOUR);
    expect((await runEconomics(deps, "default")).notices).toEqual([]);
    // Extended: a new end is a new contract end to warn about when it comes near.
    await setInstance(deps, "sim-1", { endsAt: now + 100 * HOUR });
    expect((await runEconomics(deps, "default")).notices).toEqual([]);
    expect(await noticeTitles(deps)).toEqual(["Rental of sim-1 ends soon"]);
  });
});
