/**
 * Chat without an LLM (issue #38 item 3): through the chat API of the Node host's app, with the
 * simulator and no LLM, "stop sim-2" stops sim-2 as the operator's own action (named on the
 * record and the activity log) and says so; "destroy sim-2" asks for approval as the instance page
 * would; anything else is answered plainly that chat cannot act without an LLM, with a link, and
 * never "No action was needed"; a viewer cannot chat, and a message whose operator is now a viewer
 * does not act.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { createOperator, updateOperator } from "../../auth/operators-store.ts";
import { actions, agents, approvals, events, operatorActivity } from "../../schema/index.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { agentFixture, runPipeline } from "./harness.ts";
import { parseChatCommand } from "../../agent/rules/rules-chat.ts";

let key = 0;
async function chat(deps: TestDeps, text: string, token?: string) {
  const headers = token ? { ...authHeaders(), Authorization: `Bearer ${token}` } : authHeaders();
  const res = await buildApp(() => deps).request("/api/agents/default/messages", {
    method: "POST",
    headers: { ...headers, "Idempotency-Key": `chat-test-${++key}` },
    body: JSON.stringify({ text }),
  });
  return res;
}

async function say(deps: TestDeps, text: string, token?: string) {
  const res = await chat(deps, text, token);
  expect(res.status).toBe(202);
  return runPipeline(deps);
}

describe("chat with the rules policy", () => {
  it("reads the few commands and nothing else", () => {
    expect(parseChatCommand("please stop 20002")).toEqual({ kind: "instance", action: "stop", instanceId: "20002" });
    expect(parseChatCommand("Reboot instance sim-1.")).toEqual({ kind: "instance", action: "reboot", instanceId: "sim-1" });
    expect(parseChatCommand("status?")).toEqual({ kind: "status" });
    expect(parseChatCommand("pause")).toEqual({ kind: "mode", to: "pause" });
    expect(parseChatCommand("stop worrying about sim-1 and sim-2")).toBeNull();
    expect(parseChatCommand("what's up?")).toBeNull();
  });

  it("'stop sim-2' stops it as the operator's own action and says so", async () => {
    const { deps } = await agentFixture();
    const { token } = await createOperator(deps.db, { name: "olga", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const run = await say(deps, "stop sim-2", token);
    expect(run).toMatchObject({ decider: "rules" });
    expect((await deps.provider.get("sim-2"))!.state).toBe("stopped");
    const [action] = await deps.db.select().from(actions);
    expect(action).toMatchObject({ kind: "stop", instanceId: "sim-2", decidedBy: "human", operator: "olga", status: "succeeded" });
    expect(run.reply).toMatch(/Stopped sim-2 as olga asked \(action #\d+\)/);
    expect(run.reply).toContain("/fleet/sim-2?agent=default");
    expect(run.reply).not.toMatch(/No action was needed/);
    const activity = await deps.db.select().from(operatorActivity).where(eq(operatorActivity.action, "instance_action"));
    expect(activity).toMatchObject([{ operatorName: "olga", subject: `stop sim-2 #${action!.id}` }]);
  });

  it("'destroy sim-2' files an approval (destroy is on the approval list) and the instance lives", async () => {
    const { deps } = await agentFixture();
    const run = await say(deps, "destroy sim-2");
    expect((await deps.provider.get("sim-2"))!.state).toBe("running");
    const [approval] = await deps.db.select().from(approvals);
    expect(approval).toMatchObject({ kind: "destroy", instanceId: "sim-2", status: "pending", requestedBy: "admin" });
    expect(run.reply).toMatch(new RegExp(`destroy sim-2 needs a human's approval: approval #${approval!.id} requested by admin`));
    expect(run.reply).toContain(`/approvals?agent=default#approval-${approval!.id}`);
  });

  it("anything else: chat cannot act without an LLM, with a link; 'status' lists the fleet", async () => {
    const { deps } = await agentFixture();
    const run = await say(deps, "what's up?");
    expect(run.reply).toMatch(/Without an LLM, chat cannot act on "what's up\?"/);
    expect(run.reply).toContain("/fleet?agent=default");
    expect(run.reply).not.toMatch(/No action was needed/);
    expect(await deps.db.select().from(actions)).toEqual([]);
    const status = await say(deps, "status");
    expect(status.reply).toMatch(/Status: 2 running\. sim-1 running, sim-2 running\./);
    const unknown = await say(deps, "stop sim-9");
    expect(unknown.reply).toMatch(/Did not stop sim-9: no such instance/);
    expect(await deps.db.select().from(actions)).toEqual([]);
  });

  it("a viewer cannot chat; a message whose operator became a viewer does not act", async () => {
    const { deps } = await agentFixture();
    const viewer = await createOperator(deps.db, { name: "vic", role: "viewer", createdBy: "admin", now: deps.clock.now() });
    expect((await chat(deps, "stop sim-2", viewer.token)).status).toBe(403);

    const olga = await createOperator(deps.db, { name: "olga", role: "operator", createdBy: "admin", now: deps.clock.now() });
    expect((await chat(deps, "stop sim-2", olga.token)).status).toBe(202);
    await updateOperator(deps.db, olga.operator.id, { role: "viewer" });
    const run = await runPipeline(deps);
    expect(run.reply).toMatch(/Did not stop sim-2: olga is a viewer, and only an operator can act\. Nothing was done\./);
    expect(await deps.db.select().from(actions)).toEqual([]);
    expect((await deps.provider.get("sim-2"))!.state).toBe("running");
  });

  it("'pause' and 'resume' are the overview's switch, as the operator, audited; a resume hands over", async () => {
    const { deps } = await agentFixture();
    const { token } = await createOperator(deps.db, { name: "olga", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const mode = async () =>
      ((await deps.db.select().from(agents).where(eq(agents.id, "default")))[0]!.settings as { mode?: string } | null)?.mode;
    const paused = await say(deps, "pause", token);
    expect(paused.reply).toMatch(/Paused as olga asked: shadow mode/);
    expect(await mode()).toBe("shadow");
    const again = await say(deps, "pause", token);
    expect(again.reply).toMatch(/already paused/);
    const resumed = await say(deps, "resume", token);
    expect(resumed.reply).toMatch(/Resumed as olga asked: the agent acts again/);
    expect(await mode()).toBe("act");
    const switches = await deps.db.select().from(operatorActivity).where(eq(operatorActivity.action, "mode"));
    expect(switches.map((a) => [a.operatorName, a.subject])).toEqual([
      ["olga", "shadow"],
      ["olga", "shadow"],
      ["olga", "act"],
    ]);
    expect((await deps.db.select().from(events)).filter((e) => e.source === "mode")).toHaveLength(1);
  });
});
