/** A channel delivery whose publish was lost is published again by the cron tick, and delivered. */
import { afterEach, describe, expect, it } from "vitest";
import { notifyHuman } from "../../notify/notify-human.ts";
import { STALLED_AFTER_MS } from "../../notify/repair-deliveries.ts";
import { republishStalledDeliveries } from "../support/one-check.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { createTestDeps, FlakyScheduler } from "../support/test-deps.ts";
import { startReceiver, type Receiver } from "./receiver.ts";

const receivers: Receiver[] = [];
afterEach(async () => void (await Promise.all(receivers.splice(0).map((r) => r.close()))));

describe("stalled notification deliveries", () => {
  it("are re-published after the scheduler lost them, then delivered once", async () => {
    const slack = await startReceiver("/hook", 200, "slack");
    receivers.push(slack);
    const scheduler = new FlakyScheduler();
    const deps = await createTestDeps({ scheduler, vars: { SLACK_WEBHOOK_URL: slack.url } });
    await notifyHuman(deps, { agentId: "default", runId: null, title: "sim-1 exited", body: "exit 1", severity: "warning" }).catch(() => undefined);
    scheduler.down = false;

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
});
