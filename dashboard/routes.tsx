/**
 * The dashboard's routes, mounted at `/` after the API: the two static assets, sign-in and
 * sign-out, the signed-in pages, the live-update endpoint and the operator's form posts. Guards
 * are attached per route (never `use("*")`), so nothing here can shadow /healthz, /api,
 * /webhooks or /internal, or turn their 404s into redirects.
 *
 * Every signed-in page, the live endpoint and every post then select the agent of `?agent=`
 * (selected-agent.tsx): an unknown one is a 404, and posts acting on an archived one are refused.
 * Every post passes the same-origin check, then the session, then the CSRF token, then the role:
 * operator for actions on the agent, admin for the operators page and for changing agents (the
 * agents page itself is for every role).
 */
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../jobs/app-env.ts";
import * as actions from "./chat/action-handlers.tsx";
import * as agents from "./agents/agent-handlers.tsx";
import * as instances from "./fleet/instance-handlers.tsx";
import * as trust from "./chat/trust-handlers.tsx";
import * as operators from "./operators/operator-handlers.tsx";
import { DASHBOARD_JS } from "./shell/live-script.ts";
import * as pages from "./page-handlers.tsx";
import { postMode } from "./agents/mode-handlers.tsx";
import * as session from "./sign-in/session-handlers.tsx";
import { refuseArchived, selectAgent } from "./shell/selected-agent.tsx";
import { requireOperator, requireOperatorJson, sameOrigin } from "./sign-in/session.ts";
import { requirePageRole, verifyCsrfPage } from "./shell/refusal.tsx";
import { FAVICON_SVG } from "./shell/favicon.ts";
import { DASHBOARD_CSS } from "./shell/styles.ts";
import { postLiftBlock } from "./approvals/approval-blocks.tsx";
import { postBreakerLift } from "./overview/breaker-lift.tsx";
import { postReporterSetup } from "./fleet/instance-reporter.tsx";

/** Pages load only this origin's stylesheet and script; no framing (clickjacking), no inline code. */
const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", "data:"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  },
  referrerPolicy: "same-origin",
});

const asset = (body: string, type: string) => () =>
  new Response(body, { headers: { "Content-Type": `${type}; charset=utf-8`, "Cache-Control": "public, max-age=300" } });

const page = [pageHeaders, requireOperator, selectAgent("page")] as const;
const signedInPost = [pageHeaders, sameOrigin, requireOperator, verifyCsrfPage] as const;
/** Posts on the selected agent: a refusal (CSRF, role) is a page about it; acting on an archived one is refused (409). */
const agentPost = [pageHeaders, sameOrigin, requireOperator, selectAgent("page"), verifyCsrfPage] as const;
const operatorPost = [...agentPost, requirePageRole("operator"), refuseArchived] as const;
const adminPost = [...agentPost, requirePageRole("admin")] as const;

export const dashboardRoutes = new Hono<AppEnv>()
  .get("/assets/dashboard.css", asset(DASHBOARD_CSS, "text/css"))
  .get("/assets/dashboard.js", asset(DASHBOARD_JS, "text/javascript"))
  .get("/favicon.svg", asset(FAVICON_SVG, "image/svg+xml"))
  .get("/favicon.ico", asset(FAVICON_SVG, "image/svg+xml"))
  .get("/sign-in", pageHeaders, session.signInPage)
  .post("/sign-in", pageHeaders, sameOrigin, session.signIn)
  .post("/sign-out", ...signedInPost, session.signOut)
  .post("/sign-out-everywhere", ...signedInPost, session.signOutEverywhere)
  .get("/", ...page, pages.overviewPage)
  .get("/fleet", ...page, pages.fleetPage)
  .get("/fleet/:instanceId", ...page, pages.instancePage)
  .get("/runs", ...page, pages.runsPage)
  .get("/runs/:runId", ...page, pages.runDetailPage)
  .get("/wakes", ...page, pages.wakesPage)
  .get("/notifications", ...page, pages.notificationsPage)
  .get("/approvals", ...page, pages.approvalsPage)
  .get("/chat", ...page, (c) => pages.chatPage(c))
  .get("/live", requireOperatorJson, selectAgent("json"), pages.livePartsJson)
  .get("/operators", ...page, requirePageRole("admin"), operators.operatorsPage)
  .get("/agents", ...page, agents.agentsPage)
  .get("/agents/:agentId", ...page, agents.agentPage)
  .post("/trigger", ...operatorPost, actions.postTrigger)
  .post("/chat", ...operatorPost, actions.postChat)
  .post("/session/reset", ...operatorPost, actions.postReset)
  .post("/mode", ...operatorPost, postMode)
  .post("/memory/:key/delete", ...operatorPost, trust.postDeleteFact)
  .post("/runs/:runId/replay", ...operatorPost, trust.postReplay)
  .post("/approvals/:approvalId", ...operatorPost, actions.postDecision)
  .post("/operators", ...adminPost, operators.postOperator)
  .post("/operators/:operatorId/revoke", ...adminPost, operators.postRevoke)
  .post("/agents", ...adminPost, agents.postAgent)
  .post("/agents/:agentId", ...adminPost, agents.postAgentSettings)
  .post("/agents/:agentId/archive", ...adminPost, agents.postArchive)
  .post("/agents/:agentId/restore", ...adminPost, agents.postRestore)
  .post("/fleet/:instanceId/fail", ...operatorPost, actions.postFailure)
  .post("/fleet/:instanceId/actions", ...operatorPost, instances.postInstanceAction)
  .post("/fleet/:instanceId/reporter", ...operatorPost, postReporterSetup)
  .post("/blocks/:blockId/lift", ...operatorPost, instances.postLiftBlock)
  .post("/approvals/blocks/:blockId/lift", ...operatorPost, postLiftBlock)
  .post("/fleet-breaker/lift", ...operatorPost, postBreakerLift);
