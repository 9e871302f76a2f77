/**
 * Attack: a human rejected destroying sim-2; a hijacked model waits for a chat message that names
 * sim-2 and the word "destroy" — "Do NOT destroy sim-2" — and files the destroy again, now let
 * through because the message counts as asking for it (issue #37 item 8).
 * Guard: fleet/actions/human-asks.ts asksFor counts an action word only where nothing earlier in
 * its sentence negates it (not, don't, never, no, …): a negated request lifts no rejection.
 */
import { describe, expect, it } from "vitest";
import { actionBlocks, events } from "../../schema/index.ts";
import { blockingRejection } from "../../fleet/actions/action-blocks.ts";
import { asksFor } from "../../fleet/actions/human-asks.ts";
import { agentFixture } from "../agent/harness.ts";

describe("a negated request in chat", () => {
  it("'Do NOT destroy sim-2' keeps the human's rejection of that destroy; a plain request still lifts it", async () => {
    const { deps } = await agentFixture({ instances: 3 });
    const now = deps.clock.now();
    await deps.db.insert(actionBlocks).values({
      agentId: "default",
      instanceId: "sim-2",
      kind: "destroy",
      approvalId: 1,
      rejectedBy: "ops",
      rejectedAt: now,
      until: now + 3_600_000,
    });
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
    const blocked = (runId: number) =>
      blockingRejection(deps, { agentId: "default", instanceId: "sim-2", kind: "destroy", decidedBy: "llm", runId });

    await message(1, "Do NOT destroy sim-2");
    expect(await blocked(1)).toBeDefined();
    await message(2, "Please don't you dare destroy sim-2. Never delete it.");
    expect(await blocked(2)).toBeDefined();
    await message(3, "sim-1 can wait. Destroy sim-2 now.");
    expect(await blocked(3)).toBeUndefined();
  });

  it("reads each sentence: a negation in another sentence does not cancel a plain request", () => {
    for (const text of [
      "do not destroy sim-2",
      "never kill sim-2",
      "no, do not remove sim-2",
      "sim-2: please don't terminate it",
      "I won't have you delete sim-2",
    ])
      expect(asksFor(text, "sim-2", "destroy"), text).toBe(false);
    for (const text of ["destroy sim-2", "Not sure why it hangs. Destroy sim-2.", "sim-2 is broken; please delete it"])
      expect(asksFor(text, "sim-2", "destroy"), text).toBe(true);
  });
});
