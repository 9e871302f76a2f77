/**
 * A human lifting the fleet breaker (issue #33 item 9), over HTTP on real libSQL: POST
 * /api/agents/:agent/fleet-breaker/lift (operator) lifts the open episode's hold, so the rules'
 * restarts reach the provider again; it is audited as `fleet_breaker_lift`; one lift per episode
 * (a second is a 409), a viewer gets a 403 and a lift with no breaker open a 409, writing nothing.
 * The overview shows the Lift form to an operator while the breaker holds, and its post lifts it.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { agents, instances, onceNotices, operatorActivity } from "../../schema/index.ts";
import { authHeaders } from "../support/test-deps.ts";
import { watchLoop } from "../support/one-check.ts";
import { fleetOfTen as tenInstances, restart, seenAgain } from "./fleet-of-ten.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";

/** Ten instances, `dead` of them offline, seen so twice 60 s apart; the watchdog has looked; the lift over HTTP. */
async function fleetOfTen(dead: number) {
  const fleet = await tenInstances(dead);
  await seenAgain(fleet, 60);
  const { deps } = fleet;
  const { db, clock } = deps;
  await watchLoop(deps, "default");
  const app = buildApp(() => deps);
  const lift = async (headers: Record<string, string> = authHeaders()) => {
    const res = await app.request("/api/agents/default/fleet-breaker/lift", { method: "POST", headers });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const tokenOf = async (name: string, role: "viewer" | "operator") => {
    const { token } = await createOperator(db, { name, role, createdBy: "admin", now: clock.now() });
    return { authorization: `Bearer ${token}`, "content-type": "application/json" };
  };
  const liftActivity = () => db.select().from(operatorActivity).where(eq(operatorActivity.action, "fleet_breaker_lift"));
  return { ...fleet, lift, tokenOf, liftActivity };
}

describe("POST /api/agents/:agent/fleet-breaker/lift", () => {
  it("open → lift → the rules' restart reaches the provider; audited; a second lift of the episode is a 409", async () => {
    const f = await fleetOfTen(4);
    expect((await restart(f, "sim-1")).status).toBe("awaiting_approval");
    expect(f.provider.calls).toEqual([]);

    const dana = await f.tokenOf("dana", "operator");
    const lifted = await f.lift(dana);
    expect(lifted.status).toBe(200);
    expect(lifted.json).toMatchObject({ agentId: "default", liftedBy: "dana" });
    expect((await f.liftActivity()).map((a) => [a.operatorName, a.agentId, a.subject])).toEqual([
      ["dana", "default", `episode #${lifted.json.episode}`],
    ]);

    expect((await restart(f, "sim-2")).status).toBe("succeeded");
    expect(f.provider.calls).toEqual(["reboot sim-2"]);

    const again = await f.lift(dana);
    expect(again.status).toBe(409);
    expect(again.json.error).toMatch(/already lifted/);
    expect(await f.liftActivity()).toHaveLength(1);
  });

  it("the lift holds one episode only: once the share falls back and rises again, remediation is held again", async () => {
    const f = await fleetOfTen(4);
    expect((await f.lift()).status).toBe(200);
    await f.deps.db.update(instances).set({ state: "running" }).where(eq(instances.agentId, "default"));
    expect((await watchLoop(f.deps, "default")).cleared).toEqual(["fleet_breaker_open"]);
    const now = f.deps.clock.now();
    for (const id of ["sim-5", "sim-6", "sim-7", "sim-8"]) {
      await f.deps.db.update(instances).set({ state: "offline", stateAt: now }).where(eq(instances.id, id));
    }
    f.deps.clock.advance(60_000);
    await f.deps.db.update(agents).set({ lastReconciledAt: f.deps.clock.now() }).where(eq(agents.id, "default"));
    expect((await watchLoop(f.deps, "default")).started).toEqual(["fleet_breaker_open"]);
    expect((await restart(f, "sim-5")).status).toBe("awaiting_approval");
    expect((await f.lift()).status).toBe(200);
  });

  it("a viewer gets a 403 and a lift with no breaker open a 409, nothing written", async () => {
    const quiet = await fleetOfTen(1);
    const none = await quiet.lift();
    expect(none.status).toBe(409);
    expect(none.json.error).toMatch(/not open/);

    const f = await fleetOfTen(4);
    expect((await f.lift(await f.tokenOf("vic", "viewer"))).status).toBe(403);
    for (const w of [quiet, f]) {
      expect(await w.liftActivity()).toEqual([]);
      expect(await w.deps.db.select().from(onceNotices).where(eq(onceNotices.key, "fleet-breaker-lifted:1"))).toEqual([]);
    }
    expect((await restart(f, "sim-1")).status).toBe("awaiting_approval");
  });

  it("the overview shows an operator the Lift form while the breaker holds, and its post lifts it", async () => {
    const f = await fleetOfTen(4);
    const { token } = await createOperator(f.deps.db, { name: "olga", role: "operator", createdBy: "admin", now: f.deps.clock.now() });
    const olga = await dashboardClient(f.deps, token);
    expect((await olga.page("/")).html).toContain('data-testid="breaker-lift"');
    const { token: vicToken } = await createOperator(f.deps.db, {
      name: "vic",
      role: "viewer",
      createdBy: "admin",
      now: f.deps.clock.now(),
    });
    const vic = await dashboardClient(f.deps, vicToken);
    expect((await vic.page("/")).html).not.toContain('data-testid="breaker-lift"');
    expect((await vic.post("/fleet-breaker/lift", {})).status).toBe(403);

    const res = await olga.post("/fleet-breaker/lift", {});
    expect(res.status).toBe(303);
    expect((await f.liftActivity()).map((a) => a.operatorName)).toEqual(["olga"]);
    expect((await restart(f, "sim-1")).status).toBe("succeeded");
    await watchLoop(f.deps, "default");
    expect((await olga.page("/")).html).not.toContain('data-testid="breaker-lift"');
  });
});
