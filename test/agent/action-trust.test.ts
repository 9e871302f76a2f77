/**
 * The LLM's instance actions under issue #22's trust rules, through runToolCall on real libSQL:
 * every record carries its evidence and the deciding model; an action on an instance nothing in
 * the run's input concerns becomes an approval request; and a human's rejection is lifted only by
 * a message naming that instance and that action.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { actionBlocks, actions, approvals, events, instances, wakes } from "../../schema/index.ts";
import { runToolCall } from "../../agent/tools/index.ts";
import { blockingRejection } from "../../fleet/actions/action-blocks.ts";
import { decideByRules } from "../../agent/rules/rules-policy.ts";
import { asksFor, namesInstance } from "../../fleet/actions/human-asks.ts";
import { holdLease } from "../support/held-lease.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { agentFixture } from "./harness.ts";

type Input = { events: { id: number; source: string; payload: unknown }[]; wakes: { id: number }[] };
let call = 0;
async function act(deps: TestDeps, runId: number, name: string, instanceId: string, input: Input) {
  const fence = await holdLease(deps, "default", runId);
  const outcome = await runToolCall(
    { deps, agentId: "default", runId, toolCallId: `t${++call}`, fence, answering: input },
    name,
    JSON.stringify({ instance_id: instanceId, reason: "scripted" }),
  );
  return JSON.parse(outcome.content) as { status: string; note?: string; actionId: number };
}
const row = async (deps: TestDeps, id: number) => (await deps.db.select().from(actions).where(eq(actions.id, id)))[0]!;

describe("evidence and the unconcerned-instance rule", () => {
  it("records the events, wakes and human message behind an action, and the model that decided it", async () => {
    const { deps } = await agentFixture({ instances: 3, vars: { OPENAI_BASE_URL: "http://127.0.0.1:9", AGENT_MODEL: "model-under-test" } });
    const now = deps.clock.now();
    const [wake] = await deps.db
      .insert(wakes)
      .values({ agentId: "default", dueAt: now, reason: "re-check", instanceId: "sim-2", createdAt: now })
      .returning();
    const input: Input = {
      events: [
        { id: 11, source: "webhook", payload: { instanceId: "sim-1", state: "running" } },
        { id: 12, source: "human", payload: { text: "please have a look at sim-3" } },
      ],
      wakes: [{ id: wake!.id }],
    };
    const byEvent = await act(deps, 1, "reboot_instance", "sim-1", input);
    expect(byEvent.status).toBe("succeeded");
    expect(await row(deps, byEvent.actionId)).toMatchObject({
      evidence: { eventIds: [11], wakeIds: [] },
      model: "model-under-test",
      decidedBy: "llm",
    });
    const byWake = await act(deps, 1, "reboot_instance", "sim-2", input);
    expect(await row(deps, byWake.actionId)).toMatchObject({ status: "succeeded", evidence: { eventIds: [], wakeIds: [wake!.id] } });
    const byHuman = await act(deps, 1, "stop_instance", "sim-3", input);
    expect(await row(deps, byHuman.actionId)).toMatchObject({
      status: "succeeded",
      evidence: { eventIds: [], wakeIds: [], humanMessage: { eventId: 12, text: "please have a look at sim-3" } },
    });
  });

  it("turns an action on an instance nothing concerns into an approval request, but acts on one that needs attention", async () => {
    const { deps } = await agentFixture({ instances: 3 });
    const input: Input = { events: [{ id: 21, source: "webhook", payload: { instanceId: "sim-1", state: "exited" } }], wakes: [] };
    const stray = await act(deps, 1, "stop_instance", "sim-2", input);
    expect(stray.status).toBe("awaiting_approval");
    expect(stray.note).toMatch(/nothing in this run's input concerns sim-2/);
    expect((await deps.provider.get("sim-2"))!.state).toBe("running");
    const [approval] = await deps.db.select().from(approvals);
    expect(approval).toMatchObject({
      kind: "stop",
      instanceId: "sim-2",
      reason: expect.stringMatching(/nothing in this run's input concerns sim-2.*Model's reason: scripted/),
    });

    // sim-3 is exited: its state is an attention marker of its own.
    await deps.db.update(instances).set({ state: "exited" }).where(eq(instances.id, "sim-3"));
    expect((await act(deps, 1, "start_instance", "sim-3", input)).status).toBe("succeeded");
    // "sim-1" in a message about "sim-10" does not name it.
    expect(namesInstance("sim-10 is slow", "sim-1")).toBe(false);
  });
});

describe("lifting a human's rejection", () => {
  it("only a consumed human message naming that instance and that action lifts it", async () => {
    const { deps } = await agentFixture({ instances: 2 });
    const now = deps.clock.now();
    const block = (instanceId: string, kind: string, approvalId: number) => ({
      agentId: "default",
      instanceId,
      kind,
      approvalId,
      rejectedBy: "ops",
      rejectedAt: now,
      until: now + 3_600_000,
    });
    await deps.db.insert(actionBlocks).values([block("sim-2", "destroy", 1), block("sim-1", "start", 2)]);
    const message = (runId: number, text: string) =>
      deps.db.insert(events).values({
        agentId: "default",
        source: "human",
        priority: 0,
        dedupKey: `m${runId}`,
        payload: { text },
        status: "consumed",
        runId,
        createdAt: now,
      });
    const blocked = (runId: number, instanceId: string, kind: "destroy" | "start") =>
      blockingRejection(deps, { agentId: "default", instanceId, kind, decidedBy: "llm", runId });

    await message(1, "good morning");
    expect(await blocked(1, "sim-2", "destroy")).toBeDefined();
    expect(await blocked(1, "sim-1", "start")).toBeDefined();

    await message(2, "ok, destroy sim-2 after all");
    expect(await blocked(2, "sim-2", "destroy")).toBeUndefined();
    expect(await blocked(2, "sim-1", "start")).toBeDefined();
    // The rules policy is never let through by chat.
    expect(
      await blockingRejection(deps, { agentId: "default", instanceId: "sim-2", kind: "destroy", decidedBy: "rules", runId: 2 }),
    ).toBeDefined();

    await message(3, "please restart sim-1");
    expect(await blocked(3, "sim-1", "start")).toBeUndefined();
    expect(await blocked(3, "sim-2", "destroy")).toBeDefined();
    expect(asksFor("destroy sim-20", "sim-2", "destroy")).toBe(false);
    expect(asksFor("sim-2: please stop it", "sim-2", "destroy")).toBe(false);
  });
});

describe("what the model and the rules policy are told", () => {
  it("notify_human past the run bound answers why and is no mutation; the reserved dedup prefixes are refused", async () => {
    const { deps } = await agentFixture({ vars: { NOTIFICATIONS_PER_RUN: "1" } });
    const fence = await holdLease(deps, "default", 4);
    const notify = (args: Record<string, unknown>) =>
      runToolCall(
        { deps, agentId: "default", runId: 4, toolCallId: `n${++call}`, fence, answering: { events: [], wakes: [] } },
        "notify_human",
        JSON.stringify(args),
      );
    expect((await notify({ title: "one", body: "b", severity: "info" })).mutated).toBe(true);
    const past = await notify({ title: "two", body: "b", severity: "info" });
    expect(past.mutated).toBe(false);
    expect(JSON.parse(past.content)).toMatchObject({ notificationId: null, refused: expect.stringMatching(/NOTIFICATIONS_PER_RUN/) });
    const forged = await notify({ title: "three", body: "b", severity: "info", dedup_key: "Approval:1" });
    expect(forged.invalid).toBe(true);
    expect(JSON.parse(forged.content).error).toMatch(/dedup_key: must not start with approval: or bound:/);
  });

  it("in shadow mode the tool says it was a proposal, and the rules policy's restart is a proposal with its evidence", async () => {
    const { deps } = await agentFixture({ instances: 2, vars: { AGENT_MODE: "shadow" } });
    const input: Input = { events: [{ id: 31, source: "webhook", payload: { instanceId: "sim-1", state: "exited" } }], wakes: [] };
    const proposed = await act(deps, 1, "reboot_instance", "sim-1", input);
    expect(proposed).toMatchObject({ status: "proposed", note: expect.stringMatching(/Shadow mode: recorded as a proposal/) });

    await deps.db.update(instances).set({ state: "exited" }).where(eq(instances.id, "sim-2"));
    const fence = await holdLease(deps, "default", 2);
    const rulesInput = {
      events: [{ id: 32, source: "webhook", priority: 1, payload: { instanceId: "sim-2", state: "exited" }, createdAt: deps.clock.now() }],
      wakes: [],
    };
    const decision = await decideByRules(deps, { agentId: "default", runId: 2, fence, ...rulesInput }, "no LLM");
    expect(decision.decisions.join("\n")).toMatch(/restarted sim-2.*proposed/);
    const [restart] = await deps.db.select().from(actions).where(eq(actions.decidedBy, "rules"));
    expect(restart).toMatchObject({
      kind: "start",
      instanceId: "sim-2",
      status: "proposed",
      evidence: { eventIds: [32], wakeIds: [] },
      model: null,
    });
    expect((await deps.provider.get("sim-2"))!.state).toBe("running");
  });
});
