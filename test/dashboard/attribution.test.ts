/**
 * Attribution on every human path (issue #24 item 1): an action from the instance page and from
 * the API, a chat message, Trigger now, a session reset, the mode switch, lifting a block and
 * deleting a memory fact each name the signed-in operator on what they wrote (the action, the
 * event, the conversation's user turn, the new session, the block) and in the activity log. The
 * dashboard then shows the names: chat says who sent each message ("You (alice)" on alice's
 * own), the reset divider who reset, and the run page who triggered and who wrote its user turn.
 * Real libSQL, the simulator, the agent's run with the model on a scripted server over loopback.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOperator } from "../../auth/operators-store.ts";
import { actionBlocks, actions, events, memory, messages, operatorActivity, sessions } from "../../schema/index.ts";
import { agentFixture, runPipeline } from "../support/agent-fixture.ts";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";

type Client = Awaited<ReturnType<typeof dashboardClient>>;
interface World {
  deps: TestDeps;
  alice: Client;
  bob: Client;
  aliceToken: string;
}

async function world(llm: ScriptedLlm): Promise<World> {
  const { deps } = await agentFixture({ llm, instances: 2, vars: { SIMULATOR_FAILURE_RATE: "0" } });
  const now = deps.clock.now();
  const aliceToken = (await createOperator(deps.db, { name: "alice", role: "operator", createdBy: "admin", now })).token;
  const bobToken = (await createOperator(deps.db, { name: "bob", role: "operator", createdBy: "admin", now })).token;
  return { deps, aliceToken, alice: await dashboardClient(deps, aliceToken), bob: await dashboardClient(deps, bobToken) };
}

const activity = async (deps: TestDeps) => (await deps.db.select().from(operatorActivity)).map((r) => [r.operatorName, r.action]);

/** Each human path: what alice does, and the operator named on the record it wrote. */
const PATHS: [string, string, (w: World) => Response | Promise<Response>, (w: World) => Promise<string | null | undefined>][] = [
  [
    "an action from the instance page",
    "instance_action",
    (w) => w.alice.post("/fleet/sim-1/actions", { kind: "stop", nonce: "attr-stop-1", confirm: "yes" }),
    async (w) => (await w.deps.db.select().from(actions))[0]?.operator,
  ],
  [
    "an action through the API",
    "instance_action",
    (w) =>
      w.alice.app.request("/api/agents/default/instances/sim-2/actions", {
        method: "POST",
        headers: { Authorization: `Bearer ${w.aliceToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({ kind: "reboot" }),
      }),
    async (w) => (await w.deps.db.select().from(actions))[0]?.operator,
  ],
  [
    "a chat message",
    "message",
    (w) => w.alice.post("/chat", { text: "how is sim-1?", nonce: "attr-chat-1" }),
    async (w) => ((await w.deps.db.select().from(events))[0]?.payload as { operator?: string } | undefined)?.operator,
  ],
  [
    "Trigger now",
    "trigger",
    (w) => w.alice.post("/trigger", { nonce: "attr-trigger-1" }),
    async (w) => ((await w.deps.db.select().from(events))[0]?.payload as { operator?: string } | undefined)?.operator,
  ],
  [
    "a session reset",
    "reset",
    (w) => w.alice.post("/session/reset", { confirmed: "yes" }),
    async (w) => (await w.deps.db.select().from(sessions).where(eq(sessions.epoch, 2)))[0]?.startedBy,
  ],
  [
    "the mode switch",
    "mode",
    (w) => w.alice.post("/mode", { mode: "shadow" }),
    async (w) => (await w.deps.db.select().from(operatorActivity).where(eq(operatorActivity.subject, "shadow")))[0]?.operatorName,
  ],
  [
    "lifting a block",
    "lift_block",
    async (w) => {
      const now = w.deps.clock.now();
      const [block] = await w.deps.db
        .insert(actionBlocks)
        .values({
          agentId: "default",
          instanceId: "sim-1",
          kind: "destroy",
          approvalId: 1,
          rejectedBy: "bob",
          rejectedAt: now,
          until: now + 3_600_000,
        })
        .returning();
      const page = await w.alice.page("/fleet/sim-1");
      expect(page.html).toContain("Lift the destroy block");
      return w.alice.post(`/blocks/${block!.id}/lift`, {});
    },
    async (w) => (await w.deps.db.select().from(actionBlocks))[0]?.liftedBy,
  ],
  [
    "deleting a memory fact",
    "memory_delete",
    async (w) => {
      await w.deps.db
        .insert(memory)
        .values({ agentId: "default", key: "gpu-note", fact: "sim-1 is slow", tokens: 5, updatedAt: w.deps.clock.now() });
      return w.alice.post("/memory/gpu-note/delete", {});
    },
    async (w) => {
      expect(await w.deps.db.select().from(memory)).toHaveLength(0);
      return (await w.deps.db.select().from(operatorActivity).where(eq(operatorActivity.subject, "gpu-note")))[0]?.operatorName;
    },
  ],
];

describe("every human path names its operator", () => {
  const llm = new ScriptedLlm();
  beforeAll(() => llm.start());
  afterAll(() => llm.close());

  it.each(PATHS)("%s: the record and the activity log name alice", async (_name, kind, act, recordOperator) => {
    const w = await world(llm);
    const res = await act(w);
    expect(res.status).toBeLessThan(400);
    expect(await recordOperator(w)).toBe("alice");
    expect(await activity(w.deps)).toEqual([["alice", kind]]);
  });

  it("the run writes who sent the messages it answered; chat shows each sender, and the reset divider who reset", async () => {
    const w = await world(llm);
    llm.push({ text: "Both look fine." });
    await w.alice.post("/chat", { text: "is sim-1 fine?", nonce: "attr-two-1" });
    await w.bob.post("/chat", { text: "and sim-2?", nonce: "attr-two-2" });
    const run = await runPipeline(w.deps);
    const [userTurn] = await w.deps.db
      .select()
      .from(messages)
      .where(and(eq(messages.runId, run.runId), eq(messages.role, "user")));
    expect(userTurn!.operator).toBe("alice, bob");
    const [reply] = await w.deps.db
      .select()
      .from(messages)
      .where(and(eq(messages.runId, run.runId), eq(messages.role, "assistant")));
    expect(reply!.operator).toBeNull();

    const senders = (html: string) => [...html.matchAll(/data-testid="sender">([^,<]+),/g)].map((m) => m[1]);
    expect(senders((await w.alice.page("/chat")).html)).toEqual(["You (alice)", "bob"]);
    expect(senders((await w.bob.page("/chat")).html)).toEqual(["alice", "You (bob)"]);
    const runPage = (await w.bob.page(`/runs/${run.runId}`)).html;
    expect(runPage).toContain("Message from alice: “is sim-1 fine?”");
    expect(runPage).toContain("user (messages from alice, bob)");

    await w.bob.post("/session/reset", { confirmed: "yes" });
    expect((await w.alice.page("/chat")).html).toMatch(/New session \(epoch 2\) started by a session reset by bob at/);
    await w.alice.post("/trigger", { nonce: "attr-two-3" });
    const triggered = await runPipeline(w.deps);
    expect((await w.bob.page(`/runs/${triggered.runId}`)).html).toContain("Manual trigger from alice");
  });
});
