/** Rows of the settings table: who may call in (tokens, webhook and Slack secrets, sessions, throttling). */
import { z } from "zod";
import { AUTH_FAILURES_MAX, DAY_S, SESSION_TTL_MAX_S, token, WINDOW_MAX_S } from "../setting-bounds.ts";
import { flag, webhookSecret } from "./forms.ts";
import { ms, whole } from "./numbers.ts";
import { setting } from "./setting.ts";

const group = "Access and security";

/** A signing secret short enough to guess is refused (Slack's are 32 hex characters). */
const signingSecret = token
  .min(16, "must be at least 16 characters (a signing secret short enough to guess signs anything)")
  .max(512, "must be at most 512 characters")
  .optional();

/** The headers a reverse proxy puts the client's address in; `host` and the like carry none. */
export const ADDRESS_HEADERS = [
  "x-forwarded-for",
  "x-real-ip",
  "cf-connecting-ip",
  "true-client-ip",
  "fly-client-ip",
  "x-client-ip",
  "x-cluster-client-ip",
];
const COOKIE_LIMIT = " (400 days: browsers refuse a longer cookie)";

export const ACCESS_ROWS = {
  ADMIN_TOKEN: setting({
    group,
    doc: "the bootstrap admin's token for `/api` and the dashboard sign-in (required on Workers)",
    schema: token.min(16, "must be at least 16 characters").max(512, "must be at most 512 characters").optional(),
    at: "adminToken",
    secret: true,
    defaultText: "generated on Node",
    bounds: "16–512 characters",
  }),
  WEBHOOK_SECRET: setting({
    group,
    doc: "signs the `default` agent's instance webhooks (and those of agents made before secrets were per agent); every other agent has its own",
    schema: webhookSecret.optional(),
    at: "webhookSecret",
    secret: true,
    defaultText: "generated on Node (`data/webhook-secret`)",
    bounds: "`whsec_` + base64 of 24–64 random bytes",
  }),
  WEBHOOK_SECRET_GRACE_S: setting({
    group,
    doc: "after an agent's webhook secret is rotated, the previous one still verifies this long",
    ...whole(0, WINDOW_MAX_S, 86400),
    to: ms,
    at: "webhookSecretGraceMs",
  }),
  WEBHOOK_ONLY_INSTANCES_MAX: setting({
    group,
    doc: "instances per agent known only from webhooks (no provider lists them); a new one past it is 429",
    ...whole(0, 10_000, 50),
    at: "webhookOnlyInstancesMax",
  }),
  REPORTS_STORED_PER_MINUTE: setting({
    group,
    doc: "an instance's own reports stored per minute; past it a report only updates the instance's row (the newest state), a flood bound",
    ...whole(1, 100_000, 60),
    at: "reportsStoredPerMinute",
  }),
  VAST_WEBHOOK_SECRET: setting({
    group,
    doc: "the `webhook_secret` Vast.ai returned when you created (or rotated) the notification webhook; verifies `POST /webhooks/:agent/vast`",
    schema: signingSecret,
    at: "vastWebhookSecret",
    secret: true,
    bounds: "16–512 characters",
    defaultText: "– (the Vast route answers 503)",
  }),
  SLACK_SIGNING_SECRET: setting({
    group,
    doc: "the Slack app's signing secret: `POST /integrations/slack/interactions` verifies every click with it",
    schema: signingSecret,
    at: "slackSigningSecret",
    secret: true,
    bounds: "16–512 characters",
    defaultText: "– (the Slack route answers 503)",
  }),
  ALLOW_PRIVATE_URLS: setting({
    group,
    doc: "`true` (local setups) lets channel URLs set through the agents API or dashboard, and a Slack `response_url`, be `http:` and point to loopback, private or link-local hosts; otherwise they must be `https:` to a public host. Environment URLs are never restricted this way",
    schema: flag.default(false),
    at: "allowPrivateUrls",
    bounds: "`true` or `false`",
  }),
  TRUST_PROXY: setting({
    group,
    doc: "the header a reverse proxy puts the client's address in (e.g. `x-forwarded-for`); of a list, the last entry is taken. Set it only behind a proxy that sets that header",
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .refine(
        (header) => ADDRESS_HEADERS.includes(header),
        `must name a header that carries the client's address: one of ${ADDRESS_HEADERS.join(", ")}`,
      )
      .optional(),
    to: (header) => header ?? null,
    at: "trustProxyHeader",
    bounds: "a header that carries an address (x-forwarded-for, x-real-ip, cf-connecting-ip, …)",
    defaultText: "– (the TCP peer; `cf-connecting-ip` on Workers)",
  }),
  SESSION_TTL_S: setting({
    group,
    doc: "a dashboard session ends this long after sign-in, however active",
    ...whole(1, SESSION_TTL_MAX_S, 7 * DAY_S, COOKIE_LIMIT),
    to: ms,
    at: "session.ttlMs",
  }),
  SESSION_IDLE_TIMEOUT_S: setting({
    group,
    doc: "a dashboard session unused this long ends",
    ...whole(1, SESSION_TTL_MAX_S, DAY_S, COOKIE_LIMIT),
    to: ms,
    at: "session.idleMs",
  }),
  AUTH_FAILURES_PER_ADDRESS: setting({
    group,
    doc: "failed sign-ins + bearer authentications per client address per minute before a one-minute lockout",
    ...whole(1, AUTH_FAILURES_MAX, 10),
    at: "authThrottle.perAddress",
  }),
  AUTH_FAILURES_GLOBAL: setting({
    group,
    doc: "the same, over all addresses: past it only failed credentials are refused (429); a valid token or session always passes",
    ...whole(1, AUTH_FAILURES_MAX, 100),
    at: "authThrottle.global",
  }),
};
