/** notifyHuman: stored and listed, deduplicated inside the window, fanned out per channel. */
import { afterEach, describe, expect, it } from "vitest";
import { notifyHuman } from "../../notify/notify-human.ts";
import { notificationDeliveries, notifications } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders, createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";
import { startReceiver, type Receiver } from "./receiver.ts";

const alert = { agentId: "default", runId: 3, title: "sim-2 exited", body: "exit code 137", severity: "critical" as const };
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

describe("notifyHuman", () => {
  it("stores the notification and lists it through the API", async () => {
    const deps = await createTestDeps();
    const { notificationId, deduplicated } = await notifyHuman(deps, alert);
    expect(deduplicated).toBe(false);
    const res = await buildApp(() => deps).request("/api/agents/default/notifications", { headers: authHeaders() });
    expect(res.status).toBe(200);
    const { notifications: listed } = (await res.json()) as { notifications: Record<string, unknown>[] };
    expect(listed).toEqual([
      expect.objectContaining({
        id: notificationId,
        runId: 3,
        title: "sim-2 exited",
        body: "exit code 137",
        severity: "critical",
        repeats: 0,
        deliveries: [],
      }),
    ]);
  });

  it("folds a repeat inside the window into the stored one and sends nothing more", async () => {
    const deps = await createTestDeps({ vars: { SLACK_WEBHOOK_URL: "http://127.0.0.1:9/slack", NOTIFY_DEDUP_WINDOW_S: "600" } });
    const scheduler = deps.scheduler as RecordingScheduler;
    const first = await notifyHuman(deps, alert);
    deps.clock.advance(599_000);
    // Same alert, differently cased and spaced: the default key is the normalised title.
    const repeat = await notifyHuman(deps, { ...alert, title: "  SIM-2   exited ", body: "again" });
    expect(repeat).toEqual({ notificationId: first.notificationId, deduplicated: true });

    const rows = await deps.db.select().from(notifications);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.repeats).toBe(1);
    expect(await deps.db.select().from(notificationDeliveries)).toHaveLength(1);
    expect(scheduler.published).toHaveLength(1);
  });

  it("sends the same alert again once the window has passed", async () => {
    const deps = await createTestDeps({ vars: { NOTIFY_DEDUP_WINDOW_S: "600" } });
    const first = await notifyHuman(deps, alert);
    deps.clock.advance(600_000);
    const later = await notifyHuman(deps, alert);
    expect(later.deduplicated).toBe(false);
    expect(later.notificationId).not.toBe(first.notificationId);
  });

  it("keeps different alerts apart, and honours an explicit dedup key", async () => {
    const deps = await createTestDeps();
    const a = await notifyHuman(deps, alert);
    const b = await notifyHuman(deps, { ...alert, title: "sim-3 exited" });
    const c = await notifyHuman(deps, { ...alert, title: "sim-2 exited, again", dedupKey: "instance:sim-2:exited" });
    const d = await notifyHuman(deps, { ...alert, title: "sim-2 still exited", dedupKey: "instance:sim-2:exited" });
    expect(new Set([a.notificationId, b.notificationId, c.notificationId]).size).toBe(3);
    expect(d).toEqual({ notificationId: c.notificationId, deduplicated: true });
  });

  it("dedups per agent", async () => {
    const deps = await createTestDeps();
    const { ensureAgent } = await import("../../pipeline/index.ts");
    await ensureAgent(deps.db, "other", deps.clock.now());
    const a = await notifyHuman(deps, alert);
    const b = await notifyHuman(deps, { ...alert, agentId: "other" });
    expect(b.deduplicated).toBe(false);
    expect(b.notificationId).not.toBe(a.notificationId);
  });

  it("creates one delivery per configured channel and publishes each, without contacting any channel", async () => {
    const slack = await startReceiver("/slack", 200, "slack");
    const ntfy = await startReceiver("/alerts", 200, "ntfy");
    receivers.push(slack, ntfy);
    const deps = await createTestDeps({ vars: { SLACK_WEBHOOK_URL: slack.url, NTFY_URL: ntfy.url } });
    const scheduler = deps.scheduler as RecordingScheduler;
    const { notificationId } = await notifyHuman(deps, alert);

    const rows = await deps.db.select().from(notificationDeliveries);
    expect(rows.map((r) => [r.notificationId, r.channel, r.status, r.attempts])).toEqual([
      [notificationId, "slack", "pending", 0],
      [notificationId, "ntfy", "pending", 0],
    ]);
    expect(scheduler.published).toEqual(
      rows.map((r) => ({
        dedupKey: `notify:${r.id}`,
        notBefore: deps.clock.now(),
        body: { type: "notify", agentId: "default", deliveryId: r.id },
      })),
    );
    // The send happens on the scheduler's delivery, never inside the caller (a run).
    expect(slack.received).toHaveLength(0);
    expect(ntfy.received).toHaveLength(0);
  });

  it("keeps the notification when publishing a delivery fails", async () => {
    const failing = { kind: "test" as const, publish: async () => Promise.reject(new Error("scheduler down")) };
    const deps = await createTestDeps({ scheduler: failing, vars: { DISCORD_WEBHOOK_URL: "http://127.0.0.1:9/discord" } });
    const { notificationId, deduplicated } = await notifyHuman(deps, alert);
    expect(deduplicated).toBe(false);
    const [row] = await deps.db.select().from(notifications);
    expect(row!.id).toBe(notificationId);
    expect((await deps.db.select().from(notificationDeliveries))[0]!.status).toBe("pending");
  });
});

describe("GET /api/agents/:agent/notifications", () => {
  it("answers 404 for an unknown agent and 400 for a bad limit", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const unknown = await app.request("/api/agents/nobody/notifications", { headers: authHeaders() });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "unknown agent: nobody" });
    const bad = await app.request("/api/agents/default/notifications?limit=0", { headers: authHeaders() });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain("limit");
  });

  it("requires the admin token", async () => {
    const deps = await createTestDeps();
    const res = await buildApp(() => deps).request("/api/agents/default/notifications");
    expect(res.status).toBe(401);
  });
});
