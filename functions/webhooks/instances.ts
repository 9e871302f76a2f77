/**
 * POST /webhooks/:agent/instances — instance state reports signed per Standard Webhooks with the
 * agent's own secret (WEBHOOK_SECRET for `default`), or with the reported instance's own reporter
 * key (auth/webhook-secrets.ts `reporterKey`; reporter/reporter.sh sends these). jobs/instance-report.ts owns the checks, in
 * order: signature on the raw body (401), body (400; a report dated more than five minutes ahead
 * too), agent (404, archived 409), instanceFilter (403), the webhook-only cap (429); a repeated
 * webhook-id is accepted (200) and stored once. Optional telemetry (`gpuUtil`, `diskUsedPct`,
 * 0-100 %) is stored as a sample with the report; `reason: "outbid"` (with state stopped) says a
 * higher bid stopped the instance. Past REPORTS_STORED_PER_MINUTE reports of one instance in a
 * minute a report only updates the instance's row (202 with a `note`).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { acceptInstanceReport } from "../../jobs/instance-report.ts";

export const webhookRoutes = new Hono<AppEnv>().post("/:agent/instances", async (c) => {
  const recorded = await acceptInstanceReport(c.get("deps"), c.req.param("agent"), {
    raw: await c.req.text(),
    headers: {
      "webhook-id": c.req.header("webhook-id") ?? "",
      "webhook-timestamp": c.req.header("webhook-timestamp") ?? "",
      "webhook-signature": c.req.header("webhook-signature") ?? "",
    },
  });
  return c.json(recorded, recorded.duplicate ? 200 : 202);
});
