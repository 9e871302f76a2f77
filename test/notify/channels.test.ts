/** Each channel's wire format, checked on a local receiver, and how failures are classified. */
import { afterEach, describe, expect, it } from "vitest";
import { ChannelError } from "../../notify/channels/channel.ts";
import { DISCORD_MAX_CONTENT, sendDiscord } from "../../notify/channels/discord.ts";
import { sendNtfy } from "../../notify/channels/ntfy.ts";
import { sendSlack } from "../../notify/channels/slack.ts";
import { startReceiver, type Receiver } from "./receiver.ts";

let receiver: Receiver;
afterEach(() => receiver?.close());

const message = { title: "sim-2 exited", body: "exit code 137 (OOM)", severity: "critical" as const };

describe("channel wire formats", () => {
  it("Slack gets a JSON {text} with the severity and title", async () => {
    receiver = await startReceiver("/services/T000/B000/XXX", 200, "slack");
    await sendSlack(receiver.url, message);
    const [req] = receiver.received;
    expect(req!.method).toBe("POST");
    expect(req!.path).toBe("/services/T000/B000/XXX");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req!.body)).toEqual({ text: "*[CRITICAL] sim-2 exited*\nexit code 137 (OOM)" });
  });

  it("Discord gets a JSON {content} cut to 2,000 characters, with mentions disabled", async () => {
    receiver = await startReceiver("/api/webhooks/1/abc", 204, "discord");
    await sendDiscord(receiver.url, { ...message, body: "x".repeat(5000) });
    const sent = JSON.parse(receiver.received[0]!.body) as { content: string; allowed_mentions: unknown };
    expect(Array.from(sent.content)).toHaveLength(DISCORD_MAX_CONTENT);
    expect(sent.content.startsWith("**[CRITICAL] sim-2 exited**\nxxx")).toBe(true);
    expect(sent.content.endsWith("…")).toBe(true);
    expect(sent.allowed_mentions).toEqual({ parse: [] });
  });

  it("Discord leaves a short message whole", async () => {
    receiver = await startReceiver("/api/webhooks/1/abc", 204, "discord");
    await sendDiscord(receiver.url, message);
    expect(JSON.parse(receiver.received[0]!.body).content).toBe("**[CRITICAL] sim-2 exited**\nexit code 137 (OOM)");
  });

  it("ntfy gets the body as text with Title and a Priority mapped from severity", async () => {
    receiver = await startReceiver("/fleet-alerts", 200, "ntfy");
    await sendNtfy(receiver.url, message);
    await sendNtfy(receiver.url, { ...message, severity: "warning" });
    await sendNtfy(receiver.url, { ...message, severity: "info" });
    const [critical, warning, info] = receiver.received;
    expect(critical!.path).toBe("/fleet-alerts");
    expect(critical!.body).toBe("exit code 137 (OOM)");
    expect(critical!.headers.title).toBe("sim-2 exited");
    expect([critical, warning, info].map((r) => r!.headers.priority)).toEqual(["5", "4", "3"]);
  });

  it("ntfy sends a non-ASCII title as an RFC 2047 encoded word", async () => {
    receiver = await startReceiver("/fleet-alerts", 200, "ntfy");
    await sendNtfy(receiver.url, { ...message, title: "Müller’s GPU — down ⚠" });
    const header = receiver.received[0]!.headers.title as string;
    const match = /^=\?UTF-8\?B\?(.+)\?=$/.exec(header);
    expect(match).not.toBeNull();
    expect(Buffer.from(match![1]!, "base64").toString("utf8")).toBe("Müller’s GPU — down ⚠");
  });
});

describe("channel failures", () => {
  it("a 5xx or 429 is retryable, another 4xx is not", async () => {
    receiver = await startReceiver();
    receiver.script = [503, 429, 404];
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      outcomes.push(await sendSlack(receiver.url, message).catch((e: unknown) => e));
    }
    expect(outcomes.map((e) => (e as ChannelError).retryable)).toEqual([true, true, false]);
    expect(outcomes.map((e) => (e as ChannelError).status)).toEqual([503, 429, 404]);
  });

  it("a channel that never answers is abandoned after the timeout, as retryable", async () => {
    receiver = await startReceiver();
    receiver.hang = true;
    const err = await sendNtfy(receiver.url, message, 200).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).retryable).toBe(true);
    expect((err as ChannelError).message).toContain("no answer within 200 ms");
  });

  it("an unreachable channel is retryable", async () => {
    receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const err = await sendDiscord(url, message).catch((e: unknown) => e);
    expect((err as ChannelError).retryable).toBe(true);
  });
});
