/**
 * An interruptible instance stopped by a higher bid (a state event with reason `outbid`): the
 * rules policy tells a human once and does not restart it; without the reason it restarts as before.
 */
import { describe, expect, it } from "vitest";
import { actions, notifications } from "../../schema/index.ts";
import { agentFixture, setInstanceState, trigger } from "../agent/harness.ts";

const outbid = { instanceId: "sim-1", state: "exited", reason: "outbid", at: "2026-01-01T00:00:00.000Z" };

describe("outbid", () => {
  it("tells a human once and does not restart the instance", async () => {
    const { deps } = await agentFixture();
    await setInstanceState(deps, "sim-1", "exited");
    const run = await trigger(deps, { source: "webhook", payload: outbid });
    // The same change reported again (e.g. by reconciliation): folded into the stored notice.
    await trigger(deps, { source: "webhook", payload: outbid });

    expect(await deps.db.select().from(actions)).toEqual([]);
    const sent = await deps.db.select().from(notifications);
    expect(sent.map((n) => [n.title, n.repeats])).toEqual([["Instance sim-1 was outbid", 1]]);
    expect(sent[0]!.body).toContain("outbid: cannot restart without a higher bid");
    expect(run.decider).toBe("rules");
  });

  it("an exited instance without the reason is restarted as before", async () => {
    const { deps } = await agentFixture();
    await setInstanceState(deps, "sim-1", "exited");
    await trigger(deps, { source: "webhook", payload: { ...outbid, reason: undefined } });
    expect((await deps.db.select().from(actions)).map((a) => a.kind)).toEqual(["start"]);
  });
});
