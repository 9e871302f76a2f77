/**
 * POST /webhooks/:agent/instances — instance state reports signed per Standard Webhooks.
 * The signature is checked on the raw body before anything is parsed or written; a repeated
 * webhook-id is accepted (200) and stored once. A report dated more than five minutes ahead is
 * refused (400): stored, it would outrank every true report after it until that time.
 * Optional telemetry (`gpuUtil`, `diskUsedPct`, 0-100 %) is stored as a sample with the report, a
 * heartbeat's too; `reason: "outbid"` (with state stopped) says a higher bid stopped the instance.
 */
import { Hono } from "hono";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { parseJsonBody } from "../../jobs/validate.ts";
import { plainText } from "../../runtime/plain-text.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { recordInstanceState } from "../../fleet/instance-state.ts";
import { INSTANCE_STATES } from "../../fleet/provider.ts";

export const instanceReport = z.object({
  instanceId: plainText(z.string().trim().min(1).max(128)),
  state: z.enum(INSTANCE_STATES),
  at: z.iso.datetime({ offset: true }).optional(),
  message: plainText(z.string().max(2000)).optional(),
  gpuUtil: z.number().min(0).max(100).optional(),
  diskUsedPct: z.number().min(0).max(100).optional(),
  reason: z.enum(["outbid"]).optional(),
}).refine((r) => r.reason === undefined || r.state === "stopped", { path: ["reason"], message: "outbid is a reason for state stopped only" });

/** How far ahead of our clock a report's `at` may be (the signature's own tolerance). */
export const MAX_REPORT_AHEAD_MS = 5 * 60_000;

function verify(secret: string | undefined, raw: string, headers: Record<string, string>): void {
  if (!secret) throw new RequestError(503, "webhooks are disabled: WEBHOOK_SECRET is not configured");
  try {
    new Webhook(secret).verify(raw, headers, { jsonParse: false });
  } catch (err) {
    if (err instanceof WebhookVerificationError) throw new RequestError(401, `webhook signature rejected: ${err.message}`);
    throw err;
  }
}

export const webhookRoutes = new Hono<AppEnv>().post("/:agent/instances", async (c) => {
  const deps = c.get("deps");
  const webhookId = c.req.header("webhook-id") ?? "";
  if (webhookId.length > 256) throw new RequestError(400, "invalid header webhook-id: longer than 256 characters");
  const raw = await c.req.text();
  verify(deps.config.webhookSecret, raw, {
    "webhook-id": webhookId,
    "webhook-timestamp": c.req.header("webhook-timestamp") ?? "",
    "webhook-signature": c.req.header("webhook-signature") ?? "",
  });
  const report = parseJsonBody(raw, instanceReport);
  const at = report.at ? Date.parse(report.at) : undefined;
  if (at !== undefined && at > deps.clock.now() + MAX_REPORT_AHEAD_MS) {
    throw new RequestError(400, `invalid body: at: more than 5 minutes in the future (now is ${new Date(deps.clock.now()).toISOString()})`);
  }
  const agentId = c.req.param("agent");
  const scope = await withAgent(deps, agentId);
  if (!scope) throw new RequestError(404, `unknown agent: ${agentId}`);
  if (scope.archived) throw new RequestError(409, `agent ${agentId} is archived`);
  const recorded = await recordInstanceState(scope.deps, {
    agentId,
    instanceId: report.instanceId,
    state: report.state,
    at,
    message: report.message ?? null,
    source: "webhook",
    dedupKey: `webhook:${webhookId}`,
    telemetry: { gpuUtil: report.gpuUtil, diskUsedPct: report.diskUsedPct, source: "webhook" },
    reason: report.reason ?? null,
  });
  return c.json(recorded, recorded.duplicate ? 200 : 202);
});
