/** Wiring of GET /metrics: the Prometheus exposition (jobs/metrics/metrics.ts), METRICS_TOKEN or a viewer. */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { metricsAuth } from "../../auth/metrics-auth.ts";
import { renderMetrics } from "../../jobs/metrics/metrics.ts";
import { CONTENT_TYPE } from "../../jobs/metrics/exposition.ts";

export const metricsRoutes = new Hono<AppEnv>().get("/metrics", metricsAuth, async (c) =>
  c.body(await renderMetrics(c.get("deps")), 200, { "Content-Type": CONTENT_TYPE, "Cache-Control": "no-store" }),
);
