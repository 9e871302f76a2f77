/**
 * Approvals with context (issue #24, item 4), two-person approval (APPROVAL_TWO_PERSON) and the
 * decided follow-up, through the API on real libSQL and the simulator: the approval stores the
 * instance's GPU, $/h, state and since when, who asked and when it expires; its notification
 * says so with a link to the instance; the asker cannot approve a two-person kind (403 naming
 * why; rejecting is allowed; another operator can); a decision is followed by exactly one
 * notification naming who decided, however often it is repeated.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { approvals, instances, notifications } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps } from "../support/test-deps.ts";

async function setup(vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0", PUBLIC_URL: "https://fw.example", ...vars } });
  await (deps.provider as SimulatorProvider).seed(2);
  await reconcileFleet(deps, "default");
  const now = deps.clock.now();
  const ada = (await createOperator(deps.db, { name: "ada", role: "operator", createdBy: "admin", now })).token;
  const bob = (await createOperator(deps.db, { name: "bob", role: "operator", createdBy: "admin", now })).token;
  const app = buildApp(() => deps);
  const call = (path: string, token: string, body: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  const ask = async (token = ada) => {
    const res = await call("/api/agents/default/instances/sim-2/actions", token, { kind: "destroy", note: "burning money" });
    expect(res.status).toBe(202);
    return (await res.json()).action.approvalId as number;
  };
  const decide = (id: number, token: string, decision: "approve" | "reject") =>
    call(`/api/agents/default/approvals/${id}`, token, { decision });
  return { deps, ada, bob, ask, decide };
}

describe("approval context", () => {
  it("stores the instance's GPU, $/h, state, asker and expiry, and the notification shows them with a link", async () => {
    const { deps, ask } = await setup();
    const [inst] = await deps.db.select().from(instances).where(eq(instances.id, "sim-2"));
    deps.clock.advance(5 * 60_000);
    const id = await ask();
    const [row] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
    expect(row!.requestedByOperator).toBe("ada");
    expect(row!.expiresAt).toBe(deps.clock.now() + 86_400_000);
    expect(row!.context).toMatchObject({
      instanceId: "sim-2",
      gpuName: inst!.gpuName,
      state: inst!.state,
      stateSince: inst!.stateAt,
      provider: "simulator",
    });
    expect((row!.context as { pricePerHour: number }).pricePerHour).toBe(inst!.pricePerHour);
    const [note] = await deps.db.select().from(notifications).where(eq(notifications.approvalId, id));
    expect(note!.title).toBe("Approval needed: destroy sim-2");
    expect(note!.body).toContain(`$${inst!.pricePerHour!.toFixed(2)}/h`);
    expect(note!.body).toContain(`${inst!.state} for 5 min`);
    expect(note!.body).toContain("Requested by ada");
    expect(note!.body).toContain("https://fw.example/fleet/sim-2?agent=default");
    expect(note!.body).toContain(`https://fw.example/approvals?agent=default#approval-${id}`);
  });
});

describe("APPROVAL_TWO_PERSON", () => {
  it("refuses the asker's own approval with 403 naming why, lets another operator approve, and allows rejecting", async () => {
    const { deps, ada, bob, ask, decide } = await setup({ APPROVAL_TWO_PERSON: "destroy" });
    const id = await ask(ada);
    const own = await decide(id, ada, "approve");
    expect(own.status).toBe(403);
    expect((await own.json()).error).toMatch(/APPROVAL_TWO_PERSON.*ada asked for it/);
    expect((await deps.db.select().from(approvals).where(eq(approvals.id, id)))[0]!.status).toBe("pending");
    expect((await decide(id, bob, "approve")).status).toBe(200);
    expect((await deps.provider.get("sim-2"))?.state ?? "gone").not.toBe("running");
  });

  it("lets the asker reject, and without the setting lets the asker approve", async () => {
    const two = await setup({ APPROVAL_TWO_PERSON: "destroy" });
    const id = await two.ask(two.ada);
    expect((await two.decide(id, two.ada, "reject")).status).toBe(200);
    const one = await setup();
    const other = await one.ask(one.ada);
    expect((await one.decide(other, one.ada, "approve")).status).toBe(200);
  });
});

describe("decided follow-up", () => {
  it("tells who decided once, however often the decision is repeated", async () => {
    const { deps, bob, ask, decide } = await setup();
    const id = await ask();
    expect((await decide(id, bob, "approve")).status).toBe(200);
    expect((await decide(id, bob, "approve")).status).toBe(200);
    const told = (await deps.db.select().from(notifications).where(eq(notifications.approvalId, id))).map((n) => n.title);
    expect(told).toEqual(["Approval needed: destroy sim-2", "Approved by bob: destroy sim-2"]);
  });
});
