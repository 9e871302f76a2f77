/**
 * The daily spend guard (the "needs a human" gate of fleet/actions/decide.ts): at or over the limit, a start decided by the LLM
 * or the rules policy becomes an approval request naming today's spend and the limit; under it,
 * or decided by a human, the start goes ahead.
 */
import { describe, expect, it } from "vitest";
import { actions, approvals, instanceSpend } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { utcDay } from "../../fleet/economics/spend.ts";
import { agentFixture, say, scriptedLlm, setInstanceState, trigger } from "../agent/harness.ts";
import type { TestDeps } from "../support/test-deps.ts";

function spent(deps: TestDeps, usd: number) {
  return deps.db.insert(instanceSpend).values({ agentId: "default", instanceId: "sim-2", day: utcDay(deps.clock.now()), usd });
}

async function stopped(deps: TestDeps, id: string) {
  await deps.provider.stop(id);
  await setInstanceState(deps, id, "stopped");
}

/** The LLM asked to start stopped sim-1 with `usd` spent today against a $5 limit. */
async function llmStarts(usd: number) {
  const llm = await scriptedLlm();
  const { deps } = await agentFixture({ llm, vars: { SPEND_LIMIT_PER_DAY_USD: "5" } });
  await stopped(deps, "sim-1");
  await spent(deps, usd);
  llm.push(
    { tools: [{ name: "start_instance", arguments: { instance_id: "sim-1", reason: "the human asked" }, id: "call_a" }] },
    { text: "Done." },
  );
  await say(deps, "start sim-1");
  return { deps, llm };
}

describe("the spend gate", () => {
  it("turns the LLM's start into an approval request at the limit", async () => {
    const { deps, llm } = await llmStarts(5);

    expect((await deps.provider.get("sim-1"))!.state).toBe("stopped");
    const [approval] = await deps.db.select().from(approvals);
    expect(approval).toMatchObject({ kind: "start", instanceId: "sim-1", requestedBy: "llm", status: "pending" });
    expect(approval!.reason).toContain("estimated spend today $5.00 is at or over the daily limit $5.00");
    const toolAnswer = llm.requests[1]!.messages.find((m) => m.role === "tool")!.content!;
    expect(JSON.parse(toolAnswer)).toMatchObject({ status: "awaiting_approval" });
  });

  it("lets the LLM's start through under the limit", async () => {
    const { deps } = await llmStarts(4.99);
    expect(await deps.db.select().from(approvals)).toEqual([]);
    expect((await deps.provider.get("sim-1"))!.state).not.toBe("stopped");
  });

  it("turns the rules policy's restart into an approval request at the limit", async () => {
    const { deps } = await agentFixture({ vars: { SPEND_LIMIT_PER_DAY_USD: "5" } });
    await spent(deps, 7.5);
    await setInstanceState(deps, "sim-1", "exited");
    await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });

    const [action] = await deps.db.select().from(actions);
    expect(action).toMatchObject({ kind: "start", decidedBy: "rules", status: "awaiting_approval" });
    const [approval] = await deps.db.select().from(approvals);
    expect(approval!.reason).toContain("estimated spend today $7.50 is at or over the daily limit $5.00");
  });

  it("does not hold back a human's decision", async () => {
    const { deps } = await agentFixture({ vars: { SPEND_LIMIT_PER_DAY_USD: "5" } });
    await stopped(deps, "sim-1");
    await spent(deps, 50);
    const result = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-1",
      kind: "start",
      decidedBy: "human",
      idempotencyKey: "human:start:1",
    });
    expect(result.status).toBe("succeeded");
  });
});
