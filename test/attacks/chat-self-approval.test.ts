/**
 * Attack: one operator asks the agent in chat to destroy an instance, then approves the model's
 * request herself, so a two-person action is done by one person.
 * Guard: fleet/actions/approvals.ts: a request the agent filed answering a human's chat message
 * counts as that human's for the two-person rule (APPROVAL_TWO_PERSON); her own approval is
 * refused (403, nothing done), another operator's goes through.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { approvals, events } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { fleetFixture } from "../actions/fleet-fixture.ts";

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
