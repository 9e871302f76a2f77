/**
 * The dashboard's routes, mounted at `/` after the API: the two static assets, sign-in and
 * sign-out, the signed-in pages, the live-update endpoint and the operator's form posts. Guards
 * are attached per route (never `use("*")`), so nothing here can shadow /healthz, /api,
 * /webhooks or /internal, or turn their 404s into redirects.
 *
 * Every post passes the same-origin check, then the session, then the CSRF token, then the role:
 * operator for actions on the agent, admin for the operators page.
 */
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../functions/app-env.ts";
import * as actions from "./action-handlers.tsx";
import * as operators from "./operator-handlers.tsx";
import { DASHBOARD_JS } from "./live-script.ts";
import * as pages from "./page-handlers.tsx";
import * as session from "./session-handlers.tsx";
import { requireDashboardRole, requireOperator, requireOperatorJson, sameOrigin, verifyCsrf } from "./session.ts";
import { FAVICON_SVG } from "./favicon.ts";
import { DASHBOARD_CSS } from "./styles.ts";

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

const signedInPost = [pageHeaders, sameOrigin, requireOperator, verifyCsrf] as const;
const operatorPost = [...signedInPost, requireDashboardRole("operator")] as const;
const adminPost = [...signedInPost, requireDashboardRole("admin")] as const;

export const dashboardRoutes = new Hono<AppEnv>()
  .get("/assets/dashboard.css", asset(DASHBOARD_CSS, "text/css"))
  .get("/assets/dashboard.js", asset(DASHBOARD_JS, "text/javascript"))
  .get("/favicon.svg", asset(FAVICON_SVG, "image/svg+xml"))
  .get("/favicon.ico", asset(FAVICON_SVG, "image/svg+xml"))
  .get("/sign-in", pageHeaders, session.signInPage)
  .post("/sign-in", pageHeaders, sameOrigin, session.signIn)
  .post("/sign-out", ...signedInPost, session.signOut)
  .post("/sign-out-everywhere", ...signedInPost, session.signOutEverywhere)
  .get("/", pageHeaders, requireOperator, pages.overviewPage)
  .get("/fleet", pageHeaders, requireOperator, pages.fleetPage)
  .get("/fleet/:instanceId", pageHeaders, requireOperator, pages.instancePage)
  .get("/runs", pageHeaders, requireOperator, pages.runsPage)
  .get("/runs/:runId", pageHeaders, requireOperator, pages.runDetailPage)
  .get("/wakes", pageHeaders, requireOperator, pages.wakesPage)
  .get("/notifications", pageHeaders, requireOperator, pages.notificationsPage)
  .get("/approvals", pageHeaders, requireOperator, pages.approvalsPage)
  .get("/chat", pageHeaders, requireOperator, (c) => pages.chatPage(c))
  .get("/live", requireOperatorJson, pages.livePartsJson)
  .get("/operators", pageHeaders, requireOperator, requireDashboardRole("admin"), operators.operatorsPage)
  .post("/trigger", ...operatorPost, actions.postTrigger)
  .post("/chat", ...operatorPost, actions.postChat)
  .post("/session/reset", ...operatorPost, actions.postReset)
  .post("/approvals/:approvalId", ...operatorPost, actions.postDecision)
  .post("/operators", ...adminPost, operators.postOperator)
  .post("/operators/:operatorId/revoke", ...adminPost, operators.postRevoke)
  .post("/fleet/:instanceId/fail", ...operatorPost, actions.postFailure)
  .post("/fleet/:instanceId/actions", ...operatorPost, actions.postInstanceAction);
