/**
 * A replacement told at each real stage (fleet/replacement/replacement-told.ts), each once and in
 * order, never before its effect: approved (by the rules, fleet/actions/money-told.ts) → rented on
 * an offer at its $/h against the old $/h → the new instance running → the old one destroyed. A
 * human's approval of a replace says the search has started, not that the action succeeded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq, like, or } from "drizzle-orm";
import { notifications } from "../../schema/index.ts";
import { SIM_BOOT_MS } from "../../fleet/providers/simulator-offers.ts";
import { executionWords, REPLACE_STARTED } from "../../fleet/actions/approval-messages.ts";
import { deliverDue } from "../support/drive.ts";
import { deadFleet, decide, ruleRun, rows, tick } from "../replacement/support.ts";
import { setInstance } from "../economics/economics-fixture.ts";
import { startReceiver, type Receiver } from "../notify/receiver.ts";
import type { TestDeps } from "../support/test-deps.ts";

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const stageTitles = async (deps: TestDeps) =>
  (
    await deps.db
      .select()
      .from(notifications)
      .where(or(like(notifications.dedupKey, "money:%"), like(notifications.dedupKey, "replacement-%")))
      .orderBy(notifications.id)
  ).map((n) => n.title);

describe("a replacement's stages", () => {
  it("are told each once, in order, only once each has happened (no human involved)", async () => {
    const receiver = await startReceiver("/hook", 200, "slack");
    receivers.push(receiver);
    const { deps, sim } = await deadFleet({ APPROVAL_REQUIRED_ACTIONS: "start", SLACK_WEBHOOK_URL: receiver.url });
    await setInstance(deps, "sim-1", { pricePerHour: 0.42 });
    await ruleRun(deps);
    const [row] = await rows(deps);
    expect(row).toMatchObject({ status: "approved", decidedBy: "rules" });
    expect(await stageTitles(deps)).toEqual([
      "Approved the replacement of sim-1: a replacement is being searched for (each stage is told)",
    ]);

    expect((await tick(deps)).steps).toEqual([{ id: row!.id, outcome: "created" }]);
    const [rented] = await rows(deps);
    const newId = rented!.newInstanceId!;
    const offer = rented!.offer as { id: string; pricePerHour: number };
    const titles = await stageTitles(deps);
    expect(titles).toHaveLength(2);
    expect(titles[1]).toBe(
      `Replacement of sim-1: rented ${newId} on offer ${offer.id} at $${offer.pricePerHour.toFixed(2)}/h (sim-1 cost $0.42/h: ${offer.pricePerHour >= 0.42 ? "+" : "-"}$${Math.abs(offer.pricePerHour - 0.42).toFixed(2)}/h)`,
    );

    // Still loading: nothing more is told, and a repeat of the tick tells nothing again.
    await tick(deps);
    expect(await stageTitles(deps)).toHaveLength(2);

    deps.clock.advance(SIM_BOOT_MS);
    expect((await tick(deps)).steps).toEqual([{ id: row!.id, outcome: "done" }]);
    await tick(deps);
    expect(await sim.get("sim-1")).toBeNull();
    expect((await stageTitles(deps)).slice(2)).toEqual([
      `Replacement of sim-1: ${newId} is running`,
      `Replaced sim-1 by ${newId}: the old instance is destroyed`,
    ]);
    // The old one's destroy is the "done" stage, not a second notice of its own.
    expect(await deps.db.select().from(notifications).where(like(notifications.title, "Destroyed sim-1%"))).toEqual([]);

    await deliverDue(deps);
    const sent = receiver.received.map((r) => String((JSON.parse(r.body) as { text: string }).text));
    expect(sent.filter((t) => t.includes("rented"))).toHaveLength(1);
    expect(sent.filter((t) => t.includes("the old instance is destroyed"))).toHaveLength(1);
  });

  it("after a human approves a replace, says its search has started, not that it succeeded", async () => {
    const { deps } = await deadFleet();
    await ruleRun(deps);
    const approval = await decide(deps, "approve");
    const [decided] = await deps.db
      .select()
      .from(notifications)
      .where(eq(notifications.dedupKey, `approval-decided:${approval.id}:1`));
    expect(decided!.body).toContain(REPLACE_STARTED);
    // Approving told nothing of a rent: that is told when the tick rents.
    expect(await stageTitles(deps)).toEqual([]);
    await tick(deps);
    expect(await stageTitles(deps)).toEqual([expect.stringMatching(/^Replacement of sim-1: rented /)]);
    expect(executionWords("replace", { status: "succeeded" })).toBe("replacement approved: the search for an offer has started");
    expect(executionWords("stop", { status: "succeeded" })).toBe("action succeeded");
  });
});
