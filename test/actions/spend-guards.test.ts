/**
 * Attacks on the money guards (issue #33 item 6), each written as the attack: over the daily spend
 * limit a reboot of a stopped instance starts billing as a start does, so the rules or the model
 * cannot pass the limit by rebooting instead of starting; and the two-person rule holds when one
 * person asks the agent in chat and then approves the model's request herself.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { approvals, events, instances, instanceSpend } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { fleetFixture } from "./fleet-fixture.ts";

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

describe("two-person by chat", () => {
  async function askedInChat() {
    const { deps, provider } = await fleetFixture({ APPROVAL_TWO_PERSON: "destroy", APPROVAL_REQUIRED_ACTIONS: "destroy" });
    const [message] = await deps.db
      .insert(events)
      .values({
        agentId: "default",
        source: "human",
        priority: 0,
        dedupKey: "message:destroy-sim-2",
        payload: { text: "please destroy sim-2", operator: "alice" },
        status: "consumed",
        createdAt: deps.clock.now(),
      })
      .returning();
    const asked = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "llm-destroy-sim-2",
      evidence: { eventIds: [], wakeIds: [], humanMessage: { eventId: message!.id, text: "please destroy sim-2" } },
    });
    expect(asked.status).toBe("awaiting_approval");
    return { deps, provider, approvalId: asked.approvalId! };
  }

  it("the human who asked the agent in chat cannot approve the model's request herself", async () => {
    const { deps, provider, approvalId } = await askedInChat();
    await expect(decideApproval(deps, "default", approvalId, "approve", undefined, "alice")).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/alice asked for it in chat/),
    });
    expect(provider.calls).toEqual([]);
    const [row] = await deps.db.select().from(approvals).where(eq(approvals.id, approvalId));
    expect(row?.status).toBe("pending");
  });

  it("another operator can approve it", async () => {
    const { deps, provider, approvalId } = await askedInChat();
    const { action } = await decideApproval(deps, "default", approvalId, "approve", undefined, "bob");
    expect(action?.status).toBe("succeeded");
    expect(provider.calls).toEqual(["destroy sim-2"]);
  });
});
