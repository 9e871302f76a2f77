/**
 * The conversation gains a run's turns only in the batch that records the run succeeded: never
 * for a no-op run, and never for a run declared dead whose step finished late.
 */
import { describe, expect, it } from "vitest";
import { ingestEvent } from "../../pipeline/index.ts";
import { listConversation } from "../../agent/prompt/conversation.ts";
import type { RunOutcome } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { advance, startDueDelivery } from "../support/drive.ts";
import type { AgentRunStep } from "../../jobs/deps.ts";

const outcome = (mutated: boolean): RunOutcome => ({
  decider: "llm",
  mutated,
  reply: null,
  promptTokens: 0,
  completionTokens: 0,
  contextTokens: 0,
  compaction: null,
  turns: [
    { role: "user", content: "Events: sim-1 exited", toolCalls: null, toolCallId: null, tokens: 9 },
    { role: "assistant", content: "Restarted sim-1.", toolCalls: null, toolCallId: null, tokens: 8 },
  ],
});

const state = (n: number) => ({ agentId: "default", source: "webhook" as const, priority: 1 as const, dedupKey: `w${n}`, payload: {} });

describe("conversation turns", () => {
  it("are stored with a successful run that is not a no-op, in the run's epoch", async () => {
    const deps = await createTestDeps({ runStep: async () => outcome(true) });
    await ingestEvent(deps, state(1));
    expect(await advance(deps, 10_000)).toEqual(["succeeded"]);
    const conversation = await listConversation(deps, "default");
    expect(conversation.messages.map((m) => [m.runId, m.role, m.content, m.tokens])).toEqual([
      [1, "user", "Events: sim-1 exited", 9],
      [1, "assistant", "Restarted sim-1.", 8],
    ]);
  });

  it("are not stored for a no-op run", async () => {
    const deps = await createTestDeps({ runStep: async () => outcome(false) });
    await ingestEvent(deps, state(1));
    expect(await advance(deps, 10_000)).toEqual(["succeeded"]);
    expect((await listConversation(deps, "default")).messages).toEqual([]);
  });

  it("are not stored for a run declared dead whose step finished late", async () => {
    let release = () => {};
    const slow: AgentRunStep = () => new Promise((resolve) => (release = () => resolve(outcome(true))));
    const deps = await createTestDeps({ runStep: slow });
    await ingestEvent(deps, state(1));
    deps.clock.advance(10_000);
    const late = (await startDueDelivery(deps)).done;
    deps.clock.advance(deps.config.runLeaseMs);
    await runCronTick(deps); // the lease expired: run 1 is crashed, its event handed back
    release();
    expect(await late).toBe("lost");
    expect((await listConversation(deps, "default")).messages).toEqual([]);
  });
});
