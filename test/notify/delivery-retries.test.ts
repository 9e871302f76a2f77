/**
 * Channel deliveries through the real local scheduler (durable table, backoff) against local
 * receivers: success is recorded, a failing channel is retried a bounded number of times and then
 * recorded failed, and a permanent rejection is not retried at all.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { NOTIFY_MAX_ATTEMPTS, deliverNotification } from "../../notify/deliver-notification.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { listNotifications } from "../../notify/list-notifications.ts";
import { deliveries, notificationDeliveries } from "../../schema/index.ts";
import { LocalScheduler } from "../../pipeline/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { createTestDb, createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { startReceiver, type Receiver } from "./receiver.ts";

const alert = {
  agentId: "default",
  runId: null,
  title: "sim-1 unreachable",
  body: "no heartbeat for 5 minutes",
  severity: "warning" as const,
};
const open: { receivers: Receiver[]; schedulers: LocalScheduler[] } = { receivers: [], schedulers: [] };
afterEach(async () => {
  await Promise.all(open.schedulers.splice(0).map((s) => s.stop()));
  await Promise.all(open.receivers.splice(0).map((r) => r.close()));
});

async function withLocalScheduler(vars: Record<string, string>): Promise<{ deps: TestDeps; scheduler: LocalScheduler }> {
  const db = await createTestDb();
  const base = await createTestDeps({ db, vars });
  const scheduler = new LocalScheduler({ db, clock: base.clock, log: silentLogger, visibilityMs: 60_000, maxSleepMs: 3_600_000 });
  const deps = { ...base, scheduler };
  await scheduler.start((body) => handleDelivery(deps, body));
  open.schedulers.push(scheduler);
  return { deps, scheduler };
}

/** Delivers whatever is due, then jumps the fake clock past the next backoff, `rounds` times. */
async function driveScheduler(deps: TestDeps, scheduler: LocalScheduler, rounds: number) {
  for (let i = 0; i < rounds; i++) {
    await scheduler.settle();
    deps.clock.advance(10 * 60_000);
  }
  await scheduler.settle();
}

describe("notification deliveries", () => {
  it("records a successful send", async () => {
    const slack = await startReceiver("/slack", 200, "slack");
    open.receivers.push(slack);
    const { deps, scheduler } = await withLocalScheduler({ SLACK_WEBHOOK_URL: slack.url });
    await notifyHuman(deps, alert);
    await driveScheduler(deps, scheduler, 1);

    expect(slack.received).toHaveLength(1);
    expect(JSON.parse(slack.received[0]!.body).text).toContain("sim-1 unreachable");
    const [listed] = await listNotifications(deps, "default");
    expect(listed!.deliveries).toEqual([
      {
        id: expect.any(Number),
        channel: "slack",
        status: "delivered",
        attempts: 1,
        lastStatus: null,
        lastError: null,
        deliveredAt: new Date(deps.clock.now() - 10 * 60_000).toISOString(),
      },
    ]);
  });

  it("retries a failing channel with backoff and succeeds when it recovers", async () => {
    const ntfy = await startReceiver("/alerts", 200, "ntfy");
    ntfy.script = [503, 502];
    open.receivers.push(ntfy);
    const { deps, scheduler } = await withLocalScheduler({ NTFY_URL: ntfy.url });
    await notifyHuman(deps, alert);

    await scheduler.settle();
    // Failed once: still pending, the error kept, and the scheduler holds it for later.
    const [afterFirst] = await deps.db.select().from(notificationDeliveries);
    expect(afterFirst).toMatchObject({ status: "pending", attempts: 1, lastError: expect.stringContaining("HTTP 503") });
    const [queued] = await deps.db.select().from(deliveries);
    expect(queued!.dueAt).toBeGreaterThan(deps.clock.now());

    await driveScheduler(deps, scheduler, 3);
    expect(ntfy.received).toHaveLength(3);
    const [row] = await deps.db.select().from(notificationDeliveries);
    expect(row).toMatchObject({ status: "delivered", attempts: 3 });
  });

  it("gives up after a bounded number of attempts and records the failure", async () => {
    const discord = await startReceiver("/discord", 500, "discord");
    open.receivers.push(discord);
    const { deps, scheduler } = await withLocalScheduler({ DISCORD_WEBHOOK_URL: discord.url });
    await notifyHuman(deps, alert);
    await driveScheduler(deps, scheduler, 20);

    expect(discord.received).toHaveLength(NOTIFY_MAX_ATTEMPTS);
    const [row] = await deps.db.select().from(notificationDeliveries);
    expect(row).toMatchObject({ status: "failed", attempts: NOTIFY_MAX_ATTEMPTS, lastError: expect.stringContaining("HTTP 500") });
    // The scheduler's own delivery ended cleanly (acknowledged), not as an endless retry.
    const [queued] = await deps.db.select().from(deliveries);
    expect(queued!.status).toBe("delivered");
  });

  it("does not retry a permanent rejection", async () => {
    const slack = await startReceiver("/slack", 404, "slack");
    open.receivers.push(slack);
    const { deps, scheduler } = await withLocalScheduler({ SLACK_WEBHOOK_URL: slack.url });
    await notifyHuman(deps, alert);
    await driveScheduler(deps, scheduler, 5);
    expect(slack.received).toHaveLength(1);
    const [row] = await deps.db.select().from(notificationDeliveries);
    expect(row).toMatchObject({ status: "failed", attempts: 1, lastError: expect.stringContaining("HTTP 404") });
  });

  it("one failing channel does not hold back another", async () => {
    const slack = await startReceiver("/slack", 500, "slack");
    const ntfy = await startReceiver("/alerts", 200, "ntfy");
    open.receivers.push(slack, ntfy);
    const { deps, scheduler } = await withLocalScheduler({ SLACK_WEBHOOK_URL: slack.url, NTFY_URL: ntfy.url });
    await notifyHuman(deps, alert);
    await scheduler.settle();
    const rows = await deps.db.select().from(notificationDeliveries);
    expect(Object.fromEntries(rows.map((r) => [r.channel, r.status]))).toEqual({ slack: "pending", ntfy: "delivered" });
  });

  it("is idempotent: a repeated delivery of a delivered row sends nothing", async () => {
    const slack = await startReceiver("/slack", 200, "slack");
    open.receivers.push(slack);
    const deps = await createTestDeps({ vars: { SLACK_WEBHOOK_URL: slack.url } });
    await notifyHuman(deps, alert);
    const [row] = await deps.db.select().from(notificationDeliveries);
    await deliverNotification(deps, row!.id);
    await deliverNotification(deps, row!.id);
    await deliverNotification(deps, 9999);
    expect(slack.received).toHaveLength(1);
    const [after] = await deps.db.select().from(notificationDeliveries).where(eq(notificationDeliveries.id, row!.id));
    expect(after).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("throws a retryable failure so the scheduler retries, and stops throwing at the bound", async () => {
    const ntfy = await startReceiver("/alerts", 503, "ntfy");
    open.receivers.push(ntfy);
    const deps = await createTestDeps({ vars: { NTFY_URL: ntfy.url } });
    await notifyHuman(deps, alert);
    const [row] = await deps.db.select().from(notificationDeliveries);
    for (let i = 1; i < NOTIFY_MAX_ATTEMPTS; i++) await expect(deliverNotification(deps, row!.id)).rejects.toThrow("HTTP 503");
    await expect(deliverNotification(deps, row!.id)).resolves.toBeUndefined();
    await expect(deliverNotification(deps, row!.id)).resolves.toBeUndefined();
    expect(ntfy.received).toHaveLength(NOTIFY_MAX_ATTEMPTS);
  });

  it("records a channel removed from configuration as failed instead of retrying", async () => {
    const withSlack = await createTestDeps({ vars: { SLACK_WEBHOOK_URL: "http://127.0.0.1:9/slack" } });
    await notifyHuman(withSlack, alert);
    const [row] = await withSlack.db.select().from(notificationDeliveries);
    const withoutSlack = await createTestDeps({ db: withSlack.db, clock: withSlack.clock });
    await deliverNotification(withoutSlack, row!.id);
    const [after] = await withSlack.db.select().from(notificationDeliveries);
    expect(after).toMatchObject({ status: "failed", lastError: "channel slack is not configured" });
  });
});
