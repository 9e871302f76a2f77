/**
 * A strict Vast.ai notification webhook sender for tests, signing exactly as vast-ai/docs
 * guides/reference/notification-webhooks.mdx (commit c624622622496828c1ae58edec481bba1f5d675d)
 * describes: a JSON POST with `X-Vast-Event-Id`, `X-Vast-Delivery-Attempt`, the integer Unix
 * `X-Vast-Timestamp`, and `X-Vast-Signature-256` = `sha256=` + hex HMAC-SHA256 keyed with the
 * webhook_secret's UTF-8 bytes over `<X-Vast-Timestamp>.<raw body>`. Written with node:crypto, not
 * the product's code, so a mistake in either shows as a failed verification.
 */
import { createHmac } from "node:crypto";

export const TEST_VAST_SECRET = "vast-test-webhook-secret-7f3a91";

/** The docs' example payload with the fields given. */
export function vastPayload(fields: Record<string, unknown> = {}) {
  return {
    event_id: "7e9a2c4e6f9e4a24a53b77c2d8e3f0aa",
    user_id: 123,
    notif_type: "low_credit",
    subject: "Warning - Your Vast.ai Credit Balance Is Getting Low",
    message: "Your Vast.ai balance is below your configured threshold.",
    timestamp: 1772490000.123,
    ...fields,
  };
}

export interface VastSendOptions {
  /** Our clock's time the request is signed at (ms). */
  nowMs: number;
  secret?: string;
  /** Sent instead of the signed body (a tampered delivery). */
  sentBody?: string;
  /** Headers left out. */
  omit?: readonly string[];
  attempt?: number;
}

/** A signed request for app.request(path, init). */
export function vastDelivery(body: Record<string, unknown>, options: VastSendOptions): RequestInit {
  const raw = JSON.stringify(body);
  const timestamp = String(Math.floor(options.nowMs / 1000));
  const signature = `sha256=${createHmac("sha256", Buffer.from(options.secret ?? TEST_VAST_SECRET, "utf-8"))
    .update(`${timestamp}.${raw}`, "utf-8")
    .digest("hex")}`;
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "X-Vast-Event-Id": String(body.event_id),
    "X-Vast-Delivery-Attempt": String(options.attempt ?? 1),
    "X-Vast-Timestamp": timestamp,
    "X-Vast-Signature-256": signature,
  };
  for (const name of options.omit ?? []) delete headers[name];
  return { method: "POST", headers, body: options.sentBody ?? raw };
}
