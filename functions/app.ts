/**
 * The one Hono app, identical on both hosts. Hosts inject how dependencies are resolved; the app
 * wires middleware (request id, body limit, deps, auth) and route groups, and nothing else.
 */
import { Hono } from "hono";
import type { AppEnv } from "../jobs/app-env.ts";
import { handleError, handleNotFound, jsonError } from "../jobs/errors.ts";
import { injectDeps, type ResolveDeps } from "./middleware/inject-deps.ts";
import { requestId } from "./middleware/request-id.ts";
import { bodyLimit } from "./middleware/body-limit.ts";
import { apiAuth } from "../auth/api-auth.ts";
import { roleByMethod } from "../auth/require-role.ts";
import { operatorRoutes } from "./operators/operators.index.ts";
import { healthRoutes } from "./health/health.ts";
import { metricsRoutes } from "./metrics/metrics.ts";
import { agentRoutes } from "./agents/agents.index.ts";
import { loadAgent } from "./agents/load-agent.ts";
import { agentAdminRoutes } from "./agents-admin/agents-admin.index.ts";
import { cronRoutes } from "./cron/cron.ts";
import { webhookRoutes } from "./webhooks/instances.ts";
import { vastWebhookRoutes } from "./webhooks/vast.ts";
import { fleetRoutes } from "./fleet/fleet.index.ts";
import { replacementRoutes } from "./replacements/replacements.index.ts";
import { notificationRoutes } from "./notifications/notifications.index.ts";
import { actionRoutes } from "./actions/actions.index.ts";
import { approvalRoutes } from "./approvals/approvals.index.ts";
import { blockRoutes } from "./blocks/blocks.index.ts";
import { spendRoutes } from "./spend/spend.index.ts";
import { modeRoutes } from "./mode/mode.index.ts";
import { agentHealthRoutes } from "./watchdog/agent-health.ts";
import { trustRoutes } from "./trust/trust.index.ts";
import { deliveryRoutes } from "./internal/deliveries.ts";
import { slackRoutes } from "./integrations/slack.ts";
import { dashboardRoutes } from "../dashboard/routes.tsx";
import { fleetBreakerRoutes } from "./fleet-breaker/fleet-breaker.index.ts";
import { mcpRoutes } from "./mcp/mcp.index.ts";
import { reporterRoutes, reporterScriptRoutes } from "./reporter/reporter.index.ts";
import { openApiRoutes } from "./openapi/openapi.index.ts";
import type { RouteEntry } from "../jobs/openapi/openapi-document.ts";

export const MAX_BODY_BYTES = 256 * 1024;

export function buildApp(resolveDeps: ResolveDeps) {
  const api = new Hono<AppEnv>()
    .use(apiAuth)
    .use(roleByMethod)
    .use("/agents/:agent", loadAgent)
    .use("/agents/:agent/*", loadAgent)
    .route("/agents", agentAdminRoutes)
    .route("/agents", agentRoutes)
    .route("/agents", notificationRoutes)
    .route("/agents", actionRoutes)
    .route("/agents", approvalRoutes)
    .route("/agents", blockRoutes)
    .route("/agents", replacementRoutes)
    .route("/agents", spendRoutes)
    .route("/agents", modeRoutes)
    .route("/agents", agentHealthRoutes)
    .route("/agents", trustRoutes)
    .route("/agents", fleetBreakerRoutes)
    .route("/agents", mcpRoutes)
    .route("/", cronRoutes)
    .route("/", fleetRoutes)
    .route("/", operatorRoutes)
    .route("/", reporterRoutes);

  // The API's description reads this app's own routes once it is built (functions/openapi/).
  let self: { routes: readonly RouteEntry[] } | undefined;
  const app = new Hono<AppEnv>()
    .use(requestId())
    .use(
      bodyLimit({
        maxSize: MAX_BODY_BYTES,
        onError: (c) => jsonError(c, 413, `request body too large: the limit is ${MAX_BODY_BYTES} bytes`),
      }),
    )
    .use(injectDeps(resolveDeps))
    .route("/", healthRoutes)
    .route("/", metricsRoutes)
    .route("/", reporterScriptRoutes)
    .route(
      "/",
      openApiRoutes(() => self?.routes ?? []),
    )
    .route("/api", api)
    .route("/webhooks", webhookRoutes)
    .route("/webhooks", vastWebhookRoutes)
    .route("/internal", deliveryRoutes)
    .route("/integrations", slackRoutes)
    .route("/", dashboardRoutes)
    .onError(handleError)
    .notFound(handleNotFound);
  self = app;
  return app;
}

export type App = ReturnType<typeof buildApp>;
