/**
 * A human's "no" sticks (invariant 12): a rejected approval blocks the same action on the same
 * instance for APPROVAL_REJECT_COOLDOWN_S, for the rules policy and the LLM's tools alike; the
 * agent is told who rejected it and when, and sees active rejections in its prompt; a human
 * lifts the block by approving a request asked for in chat, or with DELETE on the block; and a
 * request that is already pending is neither filed nor paged again.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actions, approvals, notifications } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { agentFixture, say, scriptedLlm, setInstanceState, trigger } from "../agent/harness.ts";
import { fleetFixture } from "../actions/fleet-fixture.ts";

const api = (deps: TestDeps, path: string, init: RequestInit = {}) =>
  buildApp(() => deps).request(`/api/agents/default${path}`, { headers: authHeaders(), ...init });
const decide = (deps: TestDeps, id: number, decision: "approve" | "reject", note?: string) =>
  api(deps, `/approvals/${id}`, { method: "POST", body: JSON.stringify({ decision, ...(note ? { note } : {}) }) });
const approvalRows = (deps: TestDeps) => deps.db.select().from(approvals).orderBy(approvals.id);
const pages = async (deps: TestDeps) => (await deps.db.select().from(notifications)).filter((n) => n.title.startsWith("Approval needed"));
const exitedAgain = (deps: TestDeps) =>
  setInstanceState(deps, "sim-1", "exited").then(() =>
    trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } }),
  );

describe("rejection cooldown, rules policy", () => {
  it("after a rejection the rules policy does not file the restart again inside the cooldown, and does after it", async () => {
    const { deps } = await agentFixture({ vars: { APPROVAL_REQUIRED_ACTIONS: "start" } });
    await exitedAgain(deps);
    const [first] = await approvalRows(deps);
    expect(first).toMatchObject({ kind: "start", instanceId: "sim-1", status: "pending", requestedBy: "rules" });
    expect(await pages(deps)).toHaveLength(1);

    expect((await decide(deps, first!.id, "reject", "leave it down")).status).toBe(200);
    // The decision wakes the agent; then the instance keeps reporting exited.
    await trigger(deps, { source: "manual", payload: { reason: "after the rejection" } });
    for (let i = 0; i < 3; i++) {
      deps.clock.advance(10 * 60_000);
      const run = await exitedAgain(deps);
      expect(run.decider).toBe("rules");
    }
    expect(await approvalRows(deps)).toHaveLength(1);
    expect(await pages(deps)).toHaveLength(1);

    deps.clock.advance(86_400_000);
    await exitedAgain(deps);
    const rows = await approvalRows(deps);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ status: "pending", kind: "start", instanceId: "sim-1" });
  });

  it("the rules policy honours the block itself: it does not try the restart, so it pages nobody about a refusal", async () => {
    // Without its own check the policy would ask, be refused by requestApproval (a `blocked`
    // action row), and page "Restart of sim-1 failed" on every exited report.
    const { deps } = await agentFixture({ vars: { APPROVAL_REQUIRED_ACTIONS: "start" } });
    await exitedAgain(deps);
    const [asked] = await approvalRows(deps);
    await decide(deps, asked!.id, "reject", "leave it down");
    const afterRejection = (await deps.db.select().from(notifications)).length;

    for (let i = 0; i < 2; i++) {
      deps.clock.advance(10 * 60_000);
      const run = await exitedAgain(deps);
      expect(run.decider).toBe("rules");
    }
    const all = await deps.db.select().from(notifications);
    // The request and the human's decision (fleet/actions/approval-told.ts), and nothing after it.
    expect(all.map((n) => n.title)).toEqual(["Approval needed: start sim-1", "Rejected by admin: start sim-1"]);
    expect(all).toHaveLength(afterRejection);
    const blocked = (await deps.db.select().from(actions)).filter((a) => a.status === "blocked");
    expect(blocked).toEqual([]);
  });

  it("while an approval is pending, later runs neither file it again nor page again", async () => {
    const { deps } = await agentFixture({ vars: { APPROVAL_REQUIRED_ACTIONS: "start" } });
    for (let i = 0; i < 4; i++) {
      deps.clock.advance(5 * 60_000);
      await exitedAgain(deps);
    }
    expect(await approvalRows(deps)).toHaveLength(1);
    expect(await pages(deps)).toHaveLength(1);
  });
});

describe("rejection cooldown, LLM tools", () => {
  it("the tool says who rejected it and when, files nothing, and the prompt lists the rejection", async () => {
    const llm = await scriptedLlm();
    llm.push({ tools: [{ name: "destroy_instance", arguments: { instance_id: "sim-2", reason: "idle" } }] }, { text: "asked" });
    const { deps } = await agentFixture({ llm });
    await trigger(deps, { source: "manual", payload: { reason: "look" } });
    const [asked] = await approvalRows(deps);
    await decide(deps, asked!.id, "reject", "still needed");
    const rejectedAt = new Date(deps.clock.now()).toISOString();

    llm.push({ tools: [{ name: "destroy_instance", arguments: { instance_id: "sim-2", reason: "idle, really" } }] }, { text: "ok" });
    await trigger(deps, { source: "manual", payload: { reason: "look again" } });
    expect(await approvalRows(deps)).toHaveLength(1);
    const toolAnswer = llm.requests
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .at(-1)!.content!;
    expect(toolAnswer).toContain(`rejected by admin at ${rejectedAt}`);
    expect(toolAnswer).toContain("still needed");
    // The rejections open this run's input, with the fleet's snapshot (agent/prompt/).
    const input = llm.requests
      .at(-1)!
      .messages.filter((m) => m.role === "user")
      .map((m) => m.content)
      .join("\n");
    expect(input).toMatch(
      /Rejected by a human \(do not request these again unless a human asks for them\):\n<rejections>\n\{"kind":"destroy","instanceId":"sim-2","rejectedBy":"admin",.*"note":"still needed".*\}\n<\/rejections>/,
    );
    expect(await pages(deps)).toHaveLength(1);
  });

  it("a human asking in chat may file it again, and approving that lifts the block", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ tools: [{ name: "destroy_instance", arguments: { instance_id: "sim-2", reason: "idle" } }] }, { text: "asked" });
    await trigger(deps, { source: "manual", payload: { reason: "look" } });
    await decide(deps, (await approvalRows(deps))[0]!.id, "reject");

    llm.push({ tools: [{ name: "destroy_instance", arguments: { instance_id: "sim-2", reason: "the human asked" } }] }, { text: "filed" });
    await say(deps, "please destroy sim-2 after all");
    const rows = await approvalRows(deps);
    expect(rows).toHaveLength(2);
    await decide(deps, rows[1]!.id, "approve");
    const { blocks } = await (await api(deps, "/blocks")).json();
    expect(blocks).toEqual([]);
    const all = (await (await api(deps, "/blocks?active=false")).json()).blocks;
    expect(all[0]).toMatchObject({ active: false, liftedBy: `admin (approved request ${rows[1]!.id})` });
  });
});

describe("DELETE /api/agents/:agent/blocks/:id", () => {
  it("lifts the block, after which the request can be filed again; unknown ids are a 404", async () => {
    const { deps } = await fleetFixture();
    const destroy = {
      agentId: "default",
      runId: 1,
      instanceId: "sim-3",
      kind: "destroy" as const,
      decidedBy: "rules" as const,
      reason: "x",
    };
    const first = await executeAction(deps, { ...destroy, idempotencyKey: "a" });
    await decide(deps, first.approvalId!, "reject");
    const refused = await executeAction(deps, { ...destroy, runId: 2, idempotencyKey: "b" });
    expect(refused).toMatchObject({ status: "failed", repeated: false });
    expect(refused.error).toMatch(/^blocked: destroy sim-3 was rejected by admin at .* it is blocked until 2026-01-02T00:00:00.000Z/);

    const { blocks } = await (await api(deps, "/blocks")).json();
    expect(blocks).toEqual([expect.objectContaining({ instanceId: "sim-3", kind: "destroy", active: true, approvalId: first.approvalId })]);
    const lifted = await api(deps, `/blocks/${blocks[0].id}`, { method: "DELETE" });
    expect(lifted.status).toBe(200);
    expect(await lifted.json()).toMatchObject({ active: false, liftedBy: "admin" });
    expect((await executeAction(deps, { ...destroy, runId: 3, idempotencyKey: "c" })).status).toBe("awaiting_approval");

    const missing = await api(deps, "/blocks/999", { method: "DELETE" });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "unknown block: 999" });
    expect((await api(deps, "/blocks/abc", { method: "DELETE" })).status).toBe(400);
    expect((await approvalRows(deps)).filter((a) => a.status === "pending")).toHaveLength(1);
    expect(await deps.db.select().from(approvals).where(eq(approvals.instanceId, "sim-3"))).toHaveLength(2);
  });
});
