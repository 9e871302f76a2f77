/**
 * POST /webhooks/:agent/vast — Vast.ai's signed notification webhooks (fleet/providers/vast-notification.ts
 * owns the verifying, the dedup by X-Vast-Event-Id and the storing). 202 stored, 200 a repeated
 * event id or the docs' test delivery; 401 a bad, missing or stale signature; 400 a body that
 * cannot be a notification (a differing body event_id and long text are taken as Vast sends them);
 * 409 an event id another agent already stored (a replay onto this route).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { storeVastNotification, verifyVastDelivery } from "../../fleet/providers/vast-notification.ts";

export const vastWebhookRoutes = new Hono<AppEnv>().post("/:agent/vast", async (c) => {
  const deps = c.get("deps");
  const agentId = c.req.param("agent");
  const delivery = {
    raw: await c.req.text(),
    eventId: c.req.header("x-vast-event-id"),
    timestamp: c.req.header("x-vast-timestamp"),
    signature: c.req.header("x-vast-signature-256"),
  };
  const notification = await verifyVastDelivery(deps.config.vastWebhookSecret, delivery, deps.clock.now());
  const scope = await withAgent(deps, agentId);
  if (!scope) throw new RequestError(404, `unknown agent: ${agentId}`);
  if (scope.archived) throw new RequestError(409, `agent ${agentId} is archived`);
  const receipt = await storeVastNotification(scope.deps, agentId, notification);
  return c.json(receipt, "duplicate" in receipt && !receipt.duplicate ? 202 : 200);
});
