/** Builds a Standard Webhooks request (signed with the test secret) for the instance webhook route. */
import { Webhook } from "standardwebhooks";
import { TEST_WEBHOOK_SECRET } from "./test-deps.ts";

export function signedWebhook(id: string, body: unknown, secret = TEST_WEBHOOK_SECRET) {
  const raw = JSON.stringify(body);
  const at = new Date();
  return {
    method: "POST",
    headers: {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, raw),
      "content-type": "application/json",
    },
    body: raw,
  };
}
