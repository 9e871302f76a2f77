/**
 * A channel delivery whose publish was lost (the process stopped between storing the alert and
 * publishing) is published again by the cron tick, and delivered; one whose publish the scheduler
 * refused is sent at once instead, and not again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { notificationStatements, notifyHuman } from "../../notify/notify-human.ts";
import { STALLED_AFTER_MS } from "../../notify/repair-deliveries.ts";
import { republishStalledDeliveries } from "../support/one-check.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { createTestDeps, FlakyScheduler, RecordingScheduler } from "../support/test-deps.ts";
import { startReceiver, type Receiver } from "./receiver.ts";

const receivers: Receiver[] = [];
afterEach(async () => void (await Promise.all(receivers.splice(0).map((r) => r.close()))));

describe("stalled notification deliveries", () => {
  it("are re-published after their publish was lost, then delivered once", async () => {
    const slack = await startReceiver("/hook", 200, "slack");
    receivers.push(slack);
    const scheduler = new RecordingScheduler();
    const deps = await createTestDeps({ scheduler, vars: { SLACK_WEBHOOK_URL: slack.url } });
    // Stored, then the process stopped before publishing its delivery.
    const { statements } = notificationStatements(deps, { agentId: "default", runId: null, title: "sim-1 exited", body: "exit 1", severity: "warning" });
    await deps.db.batch(statements);

    expect(await republishStalledDeliveries(deps, "default")).toBe(0); // too early to call it lost
    deps.clock.advance(STALLED_AFTER_MS);
    await runCronTick(deps);
    const due = scheduler.takeDue(deps.clock.now());
    expect(due.map((d) => d.body.type)).toEqual(["notify"]);
    for (const d of due) await handleDelivery(deps, d.body);
    expect(slack.received.map((r) => JSON.parse(r.body).text)).toEqual([expect.stringContaining("sim-1 exited")]);

    deps.clock.advance(STALLED_AFTER_MS);
    expect(await republishStalledDeliveries(deps, "default")).toBe(0); // delivered: nothing to repair
  });

  it("refused by the scheduler: sent to the channel at once, and never again by the repair", async () => {
    const slack = await startReceiver("/hook", 200, "slack");
    receivers.push(slack);
    const scheduler = new FlakyScheduler();
    const deps = await createTestDeps({ scheduler, vars: { SLACK_WEBHOOK_URL: slack.url } });
    await notifyHuman(deps, { agentId: "default", runId: null, title: "sim-2 exited", body: "exit 1", severity: "warning" });
    expect(slack.received.map((r) => JSON.parse(r.body).text)).toEqual([expect.stringContaining("sim-2 exited")]);
    scheduler.down = false;
    deps.clock.advance(STALLED_AFTER_MS);
    await runCronTick(deps);
    expect(scheduler.published).toEqual([]);
    expect(slack.received).toHaveLength(1);
  });
});
