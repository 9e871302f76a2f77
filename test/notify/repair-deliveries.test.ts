/**
 * A channel delivery whose publish was lost (the process stopped between storing the alert and
 * publishing) is published again by the cron tick, and delivered; one whose publish the scheduler
 * refused is sent at once instead, and not again. A direct send that failed is tried again by the
 * repair, at growing intervals, until NOTIFY_MAX_ATTEMPTS attempts; then it is recorded failed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { notificationStatements, notifyHuman } from "../../notify/notify-human.ts";
import { STALLED_AFTER_MS } from "../../notify/repair-deliveries.ts";
import { republishStalledDeliveries } from "../support/one-check.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { createTestDeps, FlakyScheduler, RecordingScheduler } from "../support/test-deps.ts";
import { NOTIFY_MAX_ATTEMPTS } from "../../notify/deliver-notification.ts";
import { notificationDeliveries } from "../../schema/index.ts";
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
    const { statements } = notificationStatements(deps, {
      agentId: "default",
      runId: null,
      title: "sim-1 exited",
      body: "exit 1",
      severity: "warning",
    });
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

  it("a direct send that failed is tried again by the repair, while the scheduler still refuses, and delivered once", async () => {
    const slack = await startReceiver("/hook", 200, "slack");
    receivers.push(slack);
    slack.script.push(503);
    const scheduler = new FlakyScheduler();
    const deps = await createTestDeps({ scheduler, vars: { SLACK_WEBHOOK_URL: slack.url } });
    await notifyHuman(deps, { agentId: "default", runId: null, title: "sim-3 exited", body: "exit 1", severity: "warning" });
    expect(slack.received).toHaveLength(1); // the direct send, answered 503
    // One attempt used: the repair waits two intervals before the next.
    deps.clock.advance(STALLED_AFTER_MS);
    await runCronTick(deps);
    expect(slack.received).toHaveLength(1);
    deps.clock.advance(STALLED_AFTER_MS);
    await runCronTick(deps);
    expect(slack.received).toHaveLength(2);
    const [row] = await deps.db.select().from(notificationDeliveries);
    expect(row).toMatchObject({ status: "delivered", attempts: 2 });
    deps.clock.advance(10 * STALLED_AFTER_MS);
    await runCronTick(deps);
    expect(slack.received).toHaveLength(2);
  });

  it("a channel that keeps failing is tried NOTIFY_MAX_ATTEMPTS times in all, then recorded failed", async () => {
    const slack = await startReceiver("/hook", 503, "slack");
    receivers.push(slack);
    const scheduler = new FlakyScheduler();
    const deps = await createTestDeps({ scheduler, vars: { SLACK_WEBHOOK_URL: slack.url } });
    await notifyHuman(deps, { agentId: "default", runId: null, title: "sim-4 exited", body: "exit 1", severity: "warning" });
    for (let minute = 0; minute < 24 * 60; minute += 5) {
      deps.clock.advance(STALLED_AFTER_MS);
      await runCronTick(deps);
    }
    expect(slack.received).toHaveLength(NOTIFY_MAX_ATTEMPTS);
    const [row] = await deps.db.select().from(notificationDeliveries);
    expect(row).toMatchObject({ status: "failed", attempts: NOTIFY_MAX_ATTEMPTS });
  });
});
