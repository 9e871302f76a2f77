/**
 * Vast.ai notification webhooks as Vast.ai sends them (vast-ai/docs
 * guides/reference/notification-webhooks.mdx, commit 33036f9c6f23ced2e22f1f5aa52fa6d8d999b0b4):
 * "400-499 except 408 and 429: Permanent failure", so a delivery refused for its shape is lost.
 * A body whose `event_id` differs from the `X-Vast-Event-Id` header ("Use this to deduplicate
 * retries": the header is the dedup key) and a long subject or message (the docs set no length)
 * are accepted: stored once per header id, long text cut to its stored length.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { events } from "../../schema/index.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { TEST_VAST_SECRET, vastDelivery, vastPayload } from "../support/vast-webhook.ts";

async function setUp() {
  const deps = await createTestDeps({ vars: { VAST_WEBHOOK_SECRET: TEST_VAST_SECRET } });
  return { deps, app: buildApp(() => deps) };
}

describe("Vast.ai notifications as Vast.ai sends them", () => {
  it("a body event_id that differs from the header is stored under the header's id, once", async () => {
    const { deps, app } = await setUp();
    const signed = vastDelivery(vastPayload({ event_id: "body-id" }), { nowMs: deps.clock.now() });
    const request = { ...signed, headers: { ...(signed.headers as Record<string, string>), "X-Vast-Event-Id": "header-id" } };
    const res = await app.request("/webhooks/default/vast", request);
    expect(res.status).toBe(202);
    const [event] = await deps.db.select().from(events);
    expect(event).toMatchObject({
      dedupKey: "vast:header-id",
      payload: expect.objectContaining({ vastEventId: "header-id", bodyEventId: "body-id" }),
    });
    expect((await app.request("/webhooks/default/vast", request)).status).toBe(200);
    expect(await deps.db.select().from(events)).toHaveLength(1);
  });

  it("a long subject and message are accepted and stored cut to length", async () => {
    const { deps, app } = await setUp();
    const res = await app.request(
      "/webhooks/default/vast",
      vastDelivery(vastPayload({ subject: "S".repeat(2_000), message: "M".repeat(50_000) }), { nowMs: deps.clock.now() }),
    );
    expect(res.status).toBe(202);
    const [event] = await deps.db.select().from(events);
    const payload = event!.payload as { subject: string; message: string };
    expect(payload.subject.length).toBeLessThanOrEqual(500);
    expect(payload.subject.startsWith("SSS")).toBe(true);
    expect(payload.message.length).toBeLessThanOrEqual(4000);
    expect(payload.message.endsWith("…")).toBe(true);
  });
});
