/**
 * The approval follow-up tick check (fleet/actions/approval-followup.ts) on real libSQL: one reminder
 * after APPROVAL_REMIND_S and never a second; past APPROVAL_EXPIRES_S the approval is `expired`,
 * does nothing (the provider is never called, deciding it is a 409 naming the expiry), the agent
 * gets one `approval` event and a human one notice, however many ticks follow; an expiry whose
 * notice was lost is told by a later tick, once; a decision taken first is never expired; a
 * tick follows up at most FOLLOWUPS_PER_TICK approvals of each kind, and the rest on later ticks.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { executeAction } from "../../fleet/actions/actions.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { FOLLOWUPS_PER_TICK, followUpApprovals } from "../../fleet/actions/approval-followup.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { actions, approvals, events, notifications } from "../../schema/index.ts";
import { fleetFixture } from "./fleet-fixture.ts";

const HOUR = 3_600_000;

async function asked(vars: Record<string, string> = {}) {
  const fixture = await fleetFixture(vars);
  const result = await executeAction(fixture.deps, {
    agentId: "default",
    runId: 3,
    instanceId: "sim-2",
    kind: "destroy",
    decidedBy: "llm",
    idempotencyKey: "r3:destroy",
    reason: "crash loop",
  });
  const tick = () => runTickCheck(fixture.deps, "default", followUpApprovals);
  const titles = async () =>
    (await fixture.deps.db.select().from(notifications).where(eq(notifications.approvalId, result.approvalId!))).map((n) => n.title);
  return { ...fixture, id: result.approvalId!, tick, titles };
}

describe("approval reminder", () => {
  it("sends one reminder after APPROVAL_REMIND_S, never a second", async () => {
    const { deps, id, tick, titles } = await asked();
    deps.clock.advance(HOUR - 1000);
    expect((await tick()).reminded).toEqual([]);
    deps.clock.advance(2000);
    expect((await tick()).reminded).toEqual([id]);
    deps.clock.advance(2 * HOUR);
    expect((await tick()).reminded).toEqual([]);
    expect(await titles()).toEqual(["Approval needed: destroy sim-2", "Reminder: approval still needed: destroy sim-2"]);
    expect((await deps.db.select().from(approvals))[0]!.remindedAt).not.toBeNull();
  });

  it("sends none with APPROVAL_REMIND_S=0", async () => {
    const { deps, tick, titles } = await asked({ APPROVAL_REMIND_S: "0" });
    deps.clock.advance(5 * HOUR);
    expect((await tick()).reminded).toEqual([]);
    expect(await titles()).toEqual(["Approval needed: destroy sim-2"]);
  });
});

describe("approval expiry", () => {
  it("expires once: does nothing, tells the agent and a human once, and a late decision is a 409", async () => {
    const { deps, provider, id, tick, titles } = await asked({ APPROVAL_REMIND_S: "0" });
    deps.clock.advance(24 * HOUR + 1000);
    const first = await tick();
    expect(first.expired).toEqual([id]);
    for (let i = 0; i < 3; i++) {
      deps.clock.advance(60_000);
      expect(await tick()).toEqual({ expired: [], reminded: [], announced: [] });
    }
    const [row] = await deps.db.select().from(approvals);
    expect(row!.status).toBe("expired");
    const told = await deps.db.select().from(events).where(eq(events.source, "approval"));
    expect(told.map((e) => (e.payload as { decision: string }).decision)).toEqual(["expired"]);
    expect(await titles()).toEqual(["Approval needed: destroy sim-2", "Approval expired: destroy sim-2"]);
    expect((await deps.db.select().from(actions))[0]).toMatchObject({
      status: "failed",
      error: expect.stringContaining("approval expired"),
    });
    await expect(decideApproval(deps, "default", id, "approve", undefined, "ada")).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining("expired"),
    });
    expect(provider.calls).toEqual([]);
  });

  it("refuses a decision past expiry even before a tick marked it", async () => {
    const { deps, provider, id } = await asked();
    deps.clock.advance(24 * HOUR + 1);
    await expect(decideApproval(deps, "default", id, "approve", undefined, "ada")).rejects.toMatchObject({ status: 409 });
    expect(provider.calls).toEqual([]);
  });

  it("never expires an approval already decided, and tells a lost expiry notice once", async () => {
    const { deps, id, tick, titles } = await asked({ APPROVAL_REMIND_S: "0" });
    await decideApproval(deps, "default", id, "reject", undefined, "ada");
    deps.clock.advance(25 * HOUR);
    expect((await tick()).expired).toEqual([]);
    expect((await deps.db.select().from(approvals))[0]!.status).toBe("rejected");
    // An expiry whose notice a crash lost: expired, no once-mark.
    await deps.db.update(approvals).set({ status: "expired" }).where(eq(approvals.id, id));
    expect((await tick()).announced).toEqual([id]);
    expect((await tick()).announced).toEqual([]);
    expect((await titles()).filter((t) => t.startsWith("Approval expired"))).toHaveLength(1);
  });
});

describe("the follow-up bound", () => {
  it("expires and reminds at most FOLLOWUPS_PER_TICK approvals a tick; later ticks take the rest, each once", async () => {
    const { deps, id, tick } = await asked();
    // More pending approvals like the first than one tick follows up, as other runs' requests leave them.
    const [first] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
    const { id: _id, ...like } = first!;
    const total = FOLLOWUPS_PER_TICK + 5;
    await deps.db
      .insert(approvals)
      .values(Array.from({ length: total - 1 }, (_, i) => ({ ...like, instanceId: `sim-x${i}`, createdAt: like.createdAt + i + 1 })));

    deps.clock.advance(HOUR + 60_000);
    const reminded: number[][] = [];
    for (let i = 0; i < 3; i++) reminded.push((await tick()).reminded);
    expect(reminded.map((r) => r.length)).toEqual([FOLLOWUPS_PER_TICK, total - FOLLOWUPS_PER_TICK, 0]);
    expect(new Set(reminded.flat()).size).toBe(total);

    deps.clock.advance(24 * HOUR);
    const expired: number[][] = [];
    for (let i = 0; i < 3; i++) expired.push((await tick()).expired);
    expect(expired.map((e) => e.length)).toEqual([FOLLOWUPS_PER_TICK, total - FOLLOWUPS_PER_TICK, 0]);
    expect(new Set(expired.flat()).size).toBe(total);
    expect((await deps.db.select().from(approvals)).every((a) => a.status === "expired")).toBe(true);
    const told = await deps.db.select().from(events).where(eq(events.source, "approval"));
    expect(told).toHaveLength(total);
  });
});
