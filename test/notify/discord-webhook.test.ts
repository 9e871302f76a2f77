/**
 * Discord's webhook as Discord answers it (test/notify/receiver.ts header): every post asks for
 * the created message (`?wait=true`, the URL's own query kept) and a 2xx without one is a failed
 * delivery; masked links cannot be planted; a forum channel's webhook gets its `thread_name`
 * (DISCORD_THREAD_NAME or the agent's `discordThreadName`), without which Discord refuses it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { ChannelError } from "../../notify/channels/channel.ts";
import { sendDiscord } from "../../notify/channels/discord.ts";
import { deliverNotification } from "../../notify/deliver-notification.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { notificationDeliveries } from "../../schema/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { createAgent } from "../../pipeline/index.ts";
import { parseConfig } from "../../runtime/config.ts";
import { agentSettingsSchema } from "../../runtime/agent-settings.ts";
import { agentChangeFromForm, agentFormFields } from "../../dashboard/agents/agent-form.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { discordMaskedLink, startReceiver, type Receiver } from "./receiver.ts";

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function discord(path = "/api/webhooks/1/abc"): Promise<Receiver> {
  const receiver = await startReceiver(path, 200, "discord");
  open.push(receiver);
  return receiver;
}

const message = { title: "sim-2 exited", body: "exit code 137 (OOM)", severity: "critical" as const };
const alert = { agentId: "default", runId: null, ...message };
const sentBody = (r: Receiver, i = 0) => JSON.parse(r.received[i]!.body) as { content: string; thread_name?: string };

async function deliveryRow(deps: Awaited<ReturnType<typeof createTestDeps>>) {
  const [row] = await deps.db.select().from(notificationDeliveries).where(eq(notificationDeliveries.channel, "discord"));
  return row!;
}

describe("Discord: wait=true and the created message", () => {
  it("posts with ?wait=true, keeping the URL's own query, and Discord's 200 with the message is a delivery", async () => {
    const receiver = await discord();
    await sendDiscord(`${receiver.url}?thread_id=42&wait=false`, message);
    await sendDiscord(receiver.url, message);
    const queries = receiver.received.map((r) => Object.fromEntries(new URL(r.path, "http://x").searchParams));
    expect(queries).toEqual([{ thread_id: "42", wait: "true" }, { wait: "true" }]);
    expect(receiver.rejected).toEqual([]);
  });

  it("a 2xx without the created message is a failed delivery, recorded once and not retried", async () => {
    const receiver = await discord();
    receiver.discordDropsAnswer = true;
    const err = await sendDiscord(receiver.url, message).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect(err).toMatchObject({ retryable: false, status: 204, message: expect.stringContaining("without the created message") });

    const deps = await createTestDeps({ vars: { DISCORD_WEBHOOK_URL: receiver.url } });
    await notifyHuman(deps, alert);
    const row = await deliveryRow(deps);
    await deliverNotification(deps, row.id);
    await deliverNotification(deps, row.id);
    expect(await deliveryRow(deps)).toMatchObject({
      status: "failed",
      attempts: 1,
      deliveredAt: null,
      lastError: expect.stringContaining("HTTP 204 without the created message"),
    });
    expect(receiver.received).toHaveLength(2);
  });

  it("the same delivery with Discord's own answer is recorded delivered", async () => {
    const receiver = await discord();
    const deps = await createTestDeps({ vars: { DISCORD_WEBHOOK_URL: receiver.url } });
    await notifyHuman(deps, alert);
    await deliverNotification(deps, (await deliveryRow(deps)).id);
    expect(await deliveryRow(deps)).toMatchObject({ status: "delivered", attempts: 1, lastError: null });
  });
});

describe("Discord: masked links", () => {
  it("are escaped in titles and bodies, so the receiver (which refuses a live one) sees none", async () => {
    const receiver = await discord();
    await sendDiscord(receiver.url, {
      title: "[dashboard](https://evil.example/login)",
      body: "status_msg: see [the logs](https://evil.example/x) or \\[kept](https://evil.example/y)",
      severity: "warning",
    });
    expect(receiver.rejected).toEqual([]);
    const { content } = sentBody(receiver);
    expect(content).toBe(
      "**[WARNING] \\[dashboard\\](https://evil.example/login)**\nstatus_msg: see \\[the logs\\](https://evil.example/x) or \\\\\\[kept\\](https://evil.example/y)",
    );
    expect(discordMaskedLink(content)).toBeNull();
  });

  it("the receiver refuses an unescaped masked link, even behind an escaped backslash", async () => {
    const receiver = await discord();
    const post = (content: string) =>
      fetch(`${receiver.url}?wait=true`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ content, allowed_mentions: { parse: [] } }),
      });
    for (const content of ["see [logs](https://evil.example)", "\\\\[logs](https://evil.example)"]) {
      const res = await post(content);
      expect(res.status).toBe(400);
      expect((await res.json()).message).toMatch(/unescaped masked link/);
    }
    expect((await post("\\[logs](https://evil.example)")).status).toBe(200);
  });
});

describe("Discord: forum channels and thread_name", () => {
  it("a forum webhook refuses a post without thread_name (220001); DISCORD_THREAD_NAME is sent and accepted", async () => {
    const receiver = await discord();
    receiver.discordForum = true;
    const without = await createTestDeps({ vars: { DISCORD_WEBHOOK_URL: receiver.url } });
    await notifyHuman(without, alert);
    await deliverNotification(without, (await deliveryRow(without)).id);
    expect(await deliveryRow(without)).toMatchObject({ status: "failed", attempts: 1, lastError: expect.stringContaining("220001") });

    const named = await createTestDeps({ vars: { DISCORD_WEBHOOK_URL: receiver.url, DISCORD_THREAD_NAME: "fleet alerts" } });
    await notifyHuman(named, alert);
    await deliverNotification(named, (await deliveryRow(named)).id);
    expect(await deliveryRow(named)).toMatchObject({ status: "delivered" });
    expect(sentBody(receiver, 1).thread_name).toBe("fleet alerts");
  });

  it("an agent's discordThreadName is its Discord channel's thread name; others keep the environment's", async () => {
    const receiver = await discord();
    receiver.discordForum = true;
    const deps = await createTestDeps({ vars: { DISCORD_WEBHOOK_URL: receiver.url, DISCORD_THREAD_NAME: "fleet alerts" } });
    await createAgent(deps.db, { id: "team-b", settings: { discordThreadName: "team b alerts" } }, deps.clock.now());
    for (const agentId of ["team-b", "default"]) {
      const scoped = (await withAgent(deps, agentId))!.deps;
      await notifyHuman(scoped, { ...alert, agentId });
    }
    const rows = await deps.db.select().from(notificationDeliveries).orderBy(notificationDeliveries.id);
    await handleDelivery(deps, { type: "notify", agentId: "team-b", deliveryId: rows[0]!.id });
    await handleDelivery(deps, { type: "notify", agentId: "default", deliveryId: rows[1]!.id });
    expect(receiver.received.map((_, i) => sentBody(receiver, i).thread_name)).toEqual(["team b alerts", "fleet alerts"]);
  });

  it("a thread name on a webhook that is not a forum's is refused as Discord refuses it (220003)", async () => {
    const receiver = await discord();
    const err = await sendDiscord(receiver.url, message, undefined, { discordThreadName: "alerts" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, retryable: false, message: expect.stringContaining("220003") });
  });

  it("a thread name is 1-100 characters, in configuration and in agent settings", () => {
    expect(parseConfig({ DISCORD_THREAD_NAME: "GPU fleet" }, "node").discordThreadName).toBe("GPU fleet");
    expect(() => parseConfig({ DISCORD_THREAD_NAME: "x".repeat(101) }, "node")).toThrow(
      /^Configuration error: DISCORD_THREAD_NAME must be at most 100 characters/,
    );
    expect(agentSettingsSchema.safeParse({ discordThreadName: "x".repeat(101) }).error?.issues[0]?.path).toEqual(["discordThreadName"]);
  });

  it("saving the dashboard's settings form (which has no field for it) keeps an agent's thread name", () => {
    const stored = { model: "m", discordThreadName: "team b alerts" };
    const saved = agentChangeFromForm({ ...agentFormFields({ id: "team-b", name: null, settings: stored }), model: "other" }, stored);
    expect(saved).toMatchObject({ ok: true, value: { settings: { model: "other", discordThreadName: "team b alerts" } } });
  });
});
