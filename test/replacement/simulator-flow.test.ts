/**
 * A dead rental replaced end to end on the simulator: proposed by the rules policy only after
 * REPLACE_AFTER_S, approval-gated, an offer like the old one (never its machine, within price,
 * reliability and disk), one create, the old instance destroyed only once the new one runs, and
 * the lineage on both (API). Then the bounds: 0 = off, and a human's "no" sticks.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actions, approvals, notifications, simulatorInstances } from "../../schema/index.ts";
import { SIM_BOOT_MS } from "../../fleet/providers/simulator-offers.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { api, AFTER_S, deadFleet, decide, ruleRun, rows, tick } from "./support.ts";

describe("replacement on the simulator", () => {
  it("proposes after REPLACE_AFTER_S, rents a like-for-like offer once approved, destroys the old only once the new one runs", async () => {
    const { deps, sim } = await deadFleet();
    await ruleRun(deps, AFTER_S - 60); // not dead long enough yet
    expect(await rows(deps)).toEqual([]);

    await ruleRun(deps, 61);
    const [proposed] = await rows(deps);
    expect(proposed).toMatchObject({ oldInstanceId: "sim-1", status: "awaiting_approval", decidedBy: "rules" });
    const [approval] = await deps.db.select().from(approvals);
    expect(approval).toMatchObject({ kind: "replace", instanceId: "sim-1", status: "pending", id: proposed!.approvalId });
    expect(await sim.list()).toHaveLength(2); // nothing rented before a human said yes

    await decide(deps, "approve");
    // Approving only marks it approved; the tick's replacement check makes the one create.
    expect((await rows(deps))[0]).toMatchObject({ status: "approved", createAttemptedAt: null });
    expect(await sim.list()).toHaveLength(2);
    expect((await tick(deps)).steps).toEqual([{ id: proposed!.id, outcome: "created" }]);
    const [creating] = await rows(deps);
    expect(creating).toMatchObject({ status: "waiting", approvalId: approval!.id });
    expect(creating!.createAttemptedAt).not.toBeNull();
    // The cheapest RTX 4090 machine is the old one's own host; the next cheapest lacks
    // reliability, the next disk; the one chosen is within 1.25 × the old price.
    expect(creating!.offer).toMatchObject({ machineId: "sim-host-rtx4090x1-2", gpuName: "RTX 4090", gpuCount: 1 });
    const fresh = await sim.get(creating!.newInstanceId!);
    expect(fresh).toMatchObject({ state: "loading", label: creating!.marker, machineId: "sim-host-rtx4090x1-2" });
    expect(fresh!.pricePerHour!).toBeLessThanOrEqual(0.42 * 1.25);

    // Still loading: the old one is kept.
    expect((await tick(deps)).steps).toEqual([{ id: creating!.id, outcome: "waiting" }]);
    expect(await sim.get("sim-1")).not.toBeNull();

    deps.clock.advance(SIM_BOOT_MS);
    expect((await tick(deps)).steps).toEqual([{ id: creating!.id, outcome: "done" }]);
    expect(await sim.get("sim-1")).toBeNull();
    expect(await sim.get(creating!.newInstanceId!)).toMatchObject({ state: "running", label: "trainer-1" });
    const [destroy] = await deps.db.select().from(actions).where(eq(actions.kind, "destroy"));
    expect(destroy).toMatchObject({
      instanceId: "sim-1",
      status: "succeeded",
      decidedBy: "human",
      idempotencyKey: `replacement:${creating!.id}:destroy-old`,
    });
    expect(await deps.db.select().from(approvals)).toHaveLength(1); // the destroy was not asked for again

    const fleet = (await (await api(deps, "/api/agents/default/instances")).json()).instances as {
      id: string;
      replaces: string | null;
      replacedBy: string | null;
    }[];
    expect(fleet.find((i) => i.id === "sim-1")).toMatchObject({ replacedBy: creating!.newInstanceId });
    expect(fleet.find((i) => i.id === creating!.newInstanceId)).toMatchObject({ replaces: "sim-1" });
    expect((await rows(deps))[0]).toMatchObject({ status: "done" });
    const dashboard = await dashboardClient(deps);
    const page = await dashboard.page(`/fleet/${encodeURIComponent(creating!.newInstanceId!)}`);
    expect(page.html).toMatch(/Replaces<\/dt>\s*<dd><a href="\/fleet\/sim-1">sim-1<\/a>/);

    // Done is done: more ticks and runs create nothing more.
    await tick(deps);
    await ruleRun(deps, AFTER_S + 1);
    expect((await deps.db.select().from(simulatorInstances)).filter((r) => r.id.startsWith("sim-on-"))).toHaveLength(1);
  });

  it("REPLACE_AFTER_S=0 never proposes", async () => {
    const { deps } = await deadFleet({ REPLACE_AFTER_S: "0" });
    await ruleRun(deps, 7200);
    expect(await rows(deps)).toEqual([]);
    expect(await deps.db.select().from(approvals)).toEqual([]);
  });

  it("a human's rejection sticks: the replacement closes and is not asked for again", async () => {
    const { deps, sim } = await deadFleet();
    await ruleRun(deps);
    await decide(deps, "reject");
    await tick(deps);
    expect((await rows(deps))[0]).toMatchObject({ status: "rejected" });
    await ruleRun(deps, 120);
    await ruleRun(deps, 3600);
    expect(await deps.db.select().from(approvals)).toHaveLength(1);
    expect(await rows(deps)).toHaveLength(1);
    expect(await sim.list()).toHaveLength(2);
    expect((await deps.db.select().from(notifications)).filter((n) => /Approval needed/.test(n.title))).toHaveLength(1);
  });
});
