/**
 * The cron plan's "pending work" (pipeline/cron-plan.ts readCronState): an agent with a pending event
 * and no run scheduled is due; another agent's pending event does not make an idle agent due. (The
 * subquery once compared the event's agent with the event's own id, so no agent was ever due for
 * pending work, after reading every event: bench/turso-rows.bench.ts.)
 */
import { describe, expect, it } from "vitest";
import { createAgent, ingestEvent, readCronState } from "../../pipeline/index.ts";
import { agents } from "../../schema/index.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("pending work in the cron plan", () => {
  it("an agent with a pending event and no run scheduled is due; an idle agent is not", async () => {
    const deps = await createTestDeps();
    await createAgent(deps.db, { id: "idle", settings: {} }, deps.clock.now());
    await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "m1", payload: { text: "hi" } });
    await deps.db.update(agents).set({ nextRunAt: null, lastReconciledAt: deps.clock.now() }); // its run request went missing
    const state = await readCronState(deps, deps.clock.now());
    const reasons = Object.fromEntries(state.agents.map((a) => [a.agentId, a.reasons]));
    expect(reasons.default).toEqual(["pending work"]);
    expect(reasons.idle).toEqual([]);
  });
});
