/**
 * Each channel's limits and escaping, against receivers that check what the real service checks
 * (test/notify/receiver.ts): Slack gets only escaped text, Discord at most 2,000 code points with
 * mentions disabled, ntfy a body that stays a message (under 4,096 bytes, valid UTF-8).
 */
import { afterEach, describe, expect, it } from "vitest";
import { sendDiscord } from "../../notify/channels/discord.ts";
import { NTFY_CUT_MARKER, sendNtfy } from "../../notify/channels/ntfy.ts";
import { sendSlack } from "../../notify/channels/slack.ts";
import { decodeNtfyHeader, NTFY_MESSAGE_SIZE_LIMIT, startReceiver, type Receiver } from "./receiver.ts";

let receiver: Receiver | null = null;
afterEach(async () => {
  await receiver?.close();
  receiver = null;
});

const hostile = {
  title: "sim-3 <!channel> & friends",
  body: "status_msg: <https://evil.example|dashboard> a > b && <@U0123> &amp; done",
  severity: "warning" as const,
};

describe("Slack escaping", () => {
  it("escapes & < > in the title and the body, so Slack sees no control sequence", async () => {
    receiver = await startReceiver("/services/T/B/X", 200, "slack");
    await sendSlack(receiver.url, hostile);
    expect(receiver.rejected).toEqual([]);
    expect(JSON.parse(receiver.received[0]!.body).text).toBe(
      "*[WARNING] sim-3 &lt;!channel&gt; &amp; friends*\nstatus_msg: &lt;https://evil.example|dashboard&gt; a &gt; b &amp;&amp; &lt;@U0123&gt; &amp;amp; done",
    );
  });

  it("the receiver refuses unescaped control sequences, as the check above relies on", async () => {
    receiver = await startReceiver("/services/T/B/X", 200, "slack");
    for (const text of ["ping <!channel>", "<https://evil.example|dashboard>", "a & b", "1 > 0"]) {
      const res = await fetch(receiver.url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ text }),
      });
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/^invalid_payload/);
    }
    expect((await fetch(receiver.url, { method: "POST", body: JSON.stringify({}) })).status).toBe(400);
  });
});

describe("Discord limits", () => {
  it("cuts to 2,000 code points (not UTF-16 units) and disables mentions, which Discord accepts", async () => {
    receiver = await startReceiver("/api/webhooks/1/abc", 204, "discord");
    await sendDiscord(receiver.url, { title: "@everyone GPU down", body: "🔥".repeat(3000), severity: "critical" });
    expect(receiver.rejected).toEqual([]);
    const sent = JSON.parse(receiver.received[0]!.body) as { content: string; allowed_mentions: unknown };
    expect(Array.from(sent.content)).toHaveLength(2000);
    expect(sent.content.length).toBeGreaterThan(2000);
    expect(sent.allowed_mentions).toEqual({ parse: [] });
  });

  it("the receiver refuses more than 2,000 code points and a message without allowed_mentions", async () => {
    receiver = await startReceiver("/api/webhooks/1/abc", 204, "discord");
    const post = (body: unknown) =>
      fetch(receiver!.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    expect((await post({ content: "x".repeat(2001), allowed_mentions: { parse: [] } })).status).toBe(400);
    expect((await post({ content: "hello" })).status).toBe(400);
    expect((await post({ content: "x".repeat(2000), allowed_mentions: { parse: [] } })).status).toBe(204);
  });
});

describe("ntfy limits", () => {
  it("cuts a long multi-byte body under 4,096 bytes on a character boundary, with a visible marker, so it stays a message", async () => {
    receiver = await startReceiver("/alerts", 200, "ntfy");
    for (const body of ["é".repeat(4000), "🔥".repeat(1500), "x".repeat(NTFY_MESSAGE_SIZE_LIMIT), `a${"€".repeat(2000)}`]) {
      await sendNtfy(receiver.url, { title: "Müller — down", body, severity: "critical" });
    }
    expect(receiver.ntfyAttachments).toBe(0);
    expect(receiver.rejected).toEqual([]);
    for (const req of receiver.received) {
      expect(req.bodyBytes).toBeLessThan(NTFY_MESSAGE_SIZE_LIMIT);
      expect(req.body.endsWith(NTFY_CUT_MARKER)).toBe(true);
      expect(req.body).not.toContain("\uFFFD");
      expect(decodeNtfyHeader(req.headers.title as string)).toBe("Müller — down");
      expect(req.headers.priority).toBe("5");
    }
    expect(receiver.received[0]!.bodyBytes).toBeGreaterThan(NTFY_MESSAGE_SIZE_LIMIT - 8);
  });

  it("leaves a body that fits whole, up to 4,095 bytes", async () => {
    receiver = await startReceiver("/alerts", 200, "ntfy");
    const body = "y".repeat(NTFY_MESSAGE_SIZE_LIMIT - 1);
    await sendNtfy(receiver.url, { title: "t", body, severity: "info" });
    expect(receiver.received[0]!.body).toBe(body);
    expect(receiver.ntfyAttachments).toBe(0);
  });

  it("the receiver counts a 4,096-byte body as an attachment and refuses an invalid priority, as ntfy does", async () => {
    receiver = await startReceiver("/alerts", 200, "ntfy");
    await fetch(receiver.url, { method: "POST", body: "z".repeat(NTFY_MESSAGE_SIZE_LIMIT) });
    expect(receiver.ntfyAttachments).toBe(1);
    const bad = await fetch(receiver.url, { method: "POST", headers: { Priority: "7" }, body: "x" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe(40007);
  });
});
