/** Rows of the settings table: approvals, the bounds on what runs and hours may do, the watchdog. */
import { z } from "zod";
import { GUARD_COUNT_MAX, PER_HOUR_MAX, WINDOW_MAX_S } from "../setting-bounds.ts";
import { APPROVABLE_ACTIONS, approvalActions, approvalList, NO_APPROVALS, optionalActionList, optionalUrl } from "./forms.ts";
import { ms, whole } from "./numbers.ts";
import { setting } from "./setting.ts";

const approvals = "Approvals";
const bounds = "Bounds";
const actionList = `comma-separated: ${APPROVABLE_ACTIONS.join(", ")}; \`${NO_APPROVALS}\` for none`;

export const GUARD_ROWS = {
  APPROVAL_REQUIRED_ACTIONS: setting({
    group: approvals,
    doc: "actions that need a human's approval (a blank list such as `,` is refused; an unknown name is refused)",
    schema: approvalList.default("destroy,replace"),
    to: approvalActions,
    at: "approvalRequired",
    bounds: actionList,
    agent: {
      key: "approvalRequired",
      schema: z.array(z.enum(APPROVABLE_ACTIONS)).max(APPROVABLE_ACTIONS.length),
      to: (kinds) => kinds,
      field: { label: "Actions that need a human's approval", input: "actions" },
      show: (kinds) => (kinds.length ? kinds.join(", ") : "none"),
    },
  }),
  APPROVAL_TWO_PERSON: setting({
    group: approvals,
    doc: "kinds whose approval must come from another operator than the one who asked: the asker's own approve is a 403 naming why",
    schema: optionalActionList.default(NO_APPROVALS),
    to: approvalActions,
    at: "approvalTwoPerson",
    bounds: actionList,
  }),
  APPROVAL_EXPIRES_S: setting({
    group: approvals,
    doc: "a pending approval older than this is `expired` and does nothing; the agent gets an `approval` event and a human one notice",
    ...whole(1, WINDOW_MAX_S, 86400),
    to: ms,
    at: "approvalExpiresMs",
  }),
  APPROVAL_REMIND_S: setting({
    group: approvals,
    doc: "one reminder of a pending approval this long after it was asked (`0` = none)",
    ...whole(0, WINDOW_MAX_S, 3600),
    to: ms,
    at: "approvalRemindMs",
  }),
  APPROVAL_REJECT_COOLDOWN_S: setting({
    group: approvals,
    doc: "a rejected approval blocks the same action on the same instance this long (LLM and rules), unless a human asks again or lifts it",
    ...whole(0, WINDOW_MAX_S, 86400),
    to: ms,
    at: "approvalRejectCooldownMs",
  }),
  ACTION_RATE_LIMIT_PER_HOUR: setting({
    group: bounds,
    doc: "provider actions per instance per hour",
    ...whole(1, PER_HOUR_MAX, 6),
    at: "actionRateLimitPerHour",
  }),
  LLM_ACTIONS_PER_RUN: setting({
    group: bounds,
    doc: "provider actions the LLM may take in one run; past it each is `refused` (recorded with its reason)",
    ...whole(0, 1000, 3),
    at: "bounds.llmActionsPerRun",
  }),
  ACTIONS_PER_HOUR: setting({
    group: bounds,
    doc: "provider actions per agent per hour, all instances, LLM and rules together (a human's are exempt)",
    ...whole(0, PER_HOUR_MAX, 12),
    at: "bounds.actionsPerHour",
  }),
  NOTIFICATIONS_PER_RUN: setting({
    group: bounds,
    doc: "new notifications one run may send (folded repeats, approval pages and the bound notice are not counted)",
    ...whole(0, 1000, 3),
    at: "bounds.notificationsPerRun",
  }),
  NOTIFICATIONS_PER_HOUR: setting({
    group: bounds,
    doc: "new notifications per agent per hour from its runs (notices no run makes, e.g. the watchdog's, are exempt)",
    ...whole(0, PER_HOUR_MAX, 20),
    at: "bounds.notificationsPerHour",
  }),
  APPROVALS_PER_RUN: setting({
    group: bounds,
    doc: "approval requests one run may file",
    ...whole(0, 1000, 3),
    at: "bounds.approvalsPerRun",
  }),
  APPROVALS_PER_HOUR: setting({
    group: bounds,
    doc: "approval requests per agent per hour",
    ...whole(0, PER_HOUR_MAX, 10),
    at: "bounds.approvalsPerHour",
  }),
  WATCHDOG_FAILED_RUNS: setting({
    group: "Watchdog",
    doc: "failed or crashed runs in a row that raise a watchdog condition",
    ...whole(1, GUARD_COUNT_MAX, 3),
    at: "watchdogFailedRuns",
  }),
  WATCHDOG_NOTIFY_PER_HOUR: setting({
    group: "Watchdog",
    doc: "notifications + approvals for one instance in an hour above which the watchdog raises a storm (and for the agent as a whole above `NOTIFICATIONS_PER_HOUR` + `APPROVALS_PER_HOUR`)",
    ...whole(1, GUARD_COUNT_MAX, 10),
    at: "watchdogNotifyPerHour",
  }),
  MAX_UNHEALTHY_PCT: setting({
    group: "Watchdog",
    doc: "the fleet breaker: when more than this share (%) of the agent's instances are offline, unknown or gone (each seen so twice, 60 s apart; at least 2), no automatic start, reboot, replacement or destroy runs (an approval instead) and a human is told once, until the share falls back or a human lifts the hold",
    ...whole(1, 100, 30),
    at: "maxUnhealthyPct",
    agent: { key: "maxUnhealthyPct", show: (pct) => `${pct} %` },
  }),
  DEADMAN_URL: setting({
    group: "Watchdog",
    doc: "who watches the watcher: every scheduled cron tick that completes GETs this URL (a healthchecks.io or Cronitor check), `<url>/fail` while any agent's watchdog has a condition; 5 s timeout, one ping per tick, a failed ping never fails the tick. The check's service tells the humans when the pings stop",
    schema: optionalUrl,
    at: "deadmanUrl",
    secret: true,
  }),
};
