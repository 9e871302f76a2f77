/** Rows of the settings table: notification channels, and the fleet's economics (idle, spend, expiry). */
import { z } from "zod";
import { plainText } from "../plain-text.ts";
import {
  httpUrl,
  IDLE_STOP_AFTER_MAX_S,
  INTERVAL_MAX_S,
  SPEND_LIMIT_PER_DAY_MAX_USD,
  STOPPED_DESTROY_AFTER_MAX_S,
  WINDOW_MAX_S,
} from "../setting-bounds.ts";
import { maskUrl, optionalUrl } from "./forms.ts";
import { fraction, ms, secondsOrNever, whole } from "./numbers.ts";
import { setting } from "./setting.ts";

const notify = "Notifications";
const economics = "Economics";

/** A notification channel: its URL carries a token, so it is shown masked and kept when the mask comes back. */
const channel = (name: "slack" | "discord" | "ntfy") => ({
  key: `channels.${name}` as const,
  schema: httpUrl,
  field: { label: `${name} URL`, input: "url" as const, name },
  show: (url: string | undefined) => (url ? maskUrl(url) : "not configured"),
  mask: { show: maskUrl, keep: (sent: string, stored: string) => (sent === maskUrl(stored) ? stored : sent) },
});

/** A limit in dollars per UTC day (the spend limit, the owner budget): its bounds, in the environment and per agent. */
const dollarsPerDay = <T extends z.ZodNumber | z.ZodCoercedNumber>(n: T): T =>
  n.positive("must be more than 0").max(SPEND_LIMIT_PER_DAY_MAX_USD, `must be at most ${SPEND_LIMIT_PER_DAY_MAX_USD}`) as T;
const DOLLARS_PER_DAY_BOUNDS = `more than 0 – ${SPEND_LIMIT_PER_DAY_MAX_USD.toLocaleString("en-US")} (fractions allowed)`;

export const ECONOMICS_ROWS = {
  SLACK_WEBHOOK_URL: setting({
    group: notify,
    doc: "Slack incoming webhook for notifications",
    schema: optionalUrl,
    at: "channels.slack",
    secret: true,
    agent: channel("slack"),
  }),
  DISCORD_WEBHOOK_URL: setting({
    group: notify,
    doc: "Discord webhook for notifications (posted with `?wait=true`; a 2xx without the created message is a failed delivery)",
    schema: optionalUrl,
    at: "channels.discord",
    secret: true,
    agent: channel("discord"),
  }),
  NTFY_URL: setting({
    group: notify,
    doc: "ntfy topic URL for notifications",
    schema: optionalUrl,
    at: "channels.ntfy",
    secret: true,
    agent: channel("ntfy"),
  }),
  DISCORD_THREAD_NAME: setting({
    group: notify,
    doc: "sent as `thread_name`: required by a Discord forum channel's webhook (each alert opens a thread of that name) and refused by any other",
    schema: z.string().trim().max(100, "must be at most 100 characters (Discord's limit for a thread name)").optional(),
    at: "discordThreadName",
    bounds: "1–100 characters",
    agent: {
      key: "discordThreadName",
      schema: plainText(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters (Discord's limit)")),
      show: (name) => (name ? name : "none"),
    },
  }),
  NOTIFY_DEDUP_WINDOW_S: setting({
    group: notify,
    doc: "the same alert (dedup key) is not sent again within this window",
    ...whole(0, WINDOW_MAX_S, 3600),
    to: ms,
    at: "notifyDedupWindowMs",
  }),
  IDLE_GPU_UTIL_PCT: setting({
    group: economics,
    doc: "a running instance is idle while its GPU utilisation stays below this (every idle decision names its signal)",
    ...fraction(0, 100, 5),
    at: "economics.idleGpuUtilPct",
  }),
  TELEMETRY_STALE_S: setting({
    group: economics,
    doc: "utilisation older than this, or never reported, means not idle (fails safe; the dashboard marks the figure stale)",
    ...whole(1, INTERVAL_MAX_S, 600),
    to: ms,
    at: "economics.telemetryStaleMs",
  }),
  IDLE_NOTIFY_AFTER_S: setting({
    group: economics,
    doc: "idle this long → a human is told once per idle episode (`0` = never)",
    ...whole(0, WINDOW_MAX_S, 1800),
    to: ms,
    at: "economics.idleNotifyAfterMs",
    agent: { key: "idleNotifyAfterS", field: { label: "Tell a human after idle (s)", input: "number" }, show: secondsOrNever },
  }),
  IDLE_STOP_AFTER_S: setting({
    group: economics,
    doc: "idle this long → the instance is stopped (decided by `rules`; an approval when `stop` needs one), once per idle episode (`0` = never)",
    ...whole(0, IDLE_STOP_AFTER_MAX_S, 0),
    to: ms,
    at: "economics.idleStopAfterMs",
    agent: { key: "idleStopAfterS", field: { label: "Stop after idle (s, 0 = never)", input: "number" }, show: secondsOrNever },
  }),
  SPEND_LIMIT_PER_DAY_USD: setting({
    group: economics,
    doc: "estimated spend per UTC day: a human is told at 80 % and 100 %; at or over it anything that adds spend (start, replace, a reboot of a stopped instance) by the LLM or the rules needs approval (per agent: a stored `null`, the form's `none`, means no limit; a PATCH `null` goes back to the environment's limit)",
    schema: dollarsPerDay(z.coerce.number()).optional(),
    to: (usd) => usd ?? null,
    at: "economics.spendLimitPerDayUsd",
    defaultText: "– (no limit)",
    bounds: DOLLARS_PER_DAY_BOUNDS,
    agent: {
      key: "spendLimitPerDayUsd",
      schema: dollarsPerDay(z.number()).nullable(),
      field: {
        label: "Daily spend limit (USD)",
        input: "number",
        hint: "none = no limit, even if the environment sets one",
        nullWord: "none",
      },
      show: (usd) => (usd ? `$${usd} per day` : "no limit"),
    },
  }),
  STOPPED_DESTROY_AFTER_S: setting({
    group: economics,
    doc: "an instance stopped longer becomes one approval request to destroy it (stating its storage cost per day) per stopped episode (`0` = off)",
    ...whole(0, STOPPED_DESTROY_AFTER_MAX_S, 0),
    to: ms,
    at: "economics.stoppedDestroyAfterMs",
  }),
  EXPIRY_WARN_S: setting({
    group: economics,
    doc: "a rental contract ending within this → a human is told once per contract end (`0` = never)",
    ...whole(0, WINDOW_MAX_S, 86400),
    to: ms,
    at: "economics.expiryWarnMs",
  }),
  BALANCE_WARN_HOURS: setting({
    group: economics,
    doc: "the provider account's credit balance covering less than this many hours of the agent's current burn → a human is told once per UTC day (read at most every 10 minutes; `0` = never)",
    ...whole(0, 24 * 365, 24),
    at: "economics.balanceWarnHours",
  }),
  DIGEST_HOUR_UTC: setting({
    group: economics,
    doc: "the hour (UTC, 0–23) at which the agent sends its daily digest: what happened in the last 24 hours, what it cost, what fleetwarden saved, what waits for a human; one message per agent per UTC day (unset = no digest)",
    schema: z.coerce.number().int("must be a whole number").min(0, "must be at least 0").max(23, "must be at most 23").optional(),
    to: (hour) => hour ?? null,
    at: "economics.digestHourUtc",
    defaultText: "– (no digest)",
    bounds: "0 – 23",
    agent: {
      key: "digestHourUtc",
      schema: z.number().int("must be a whole number").min(0, "must be at least 0").max(23, "must be at most 23").nullable(),
      field: { label: "Daily digest hour (UTC)", input: "number", hint: "off = no digest", nullWord: "off" },
      show: (hour) => (hour === null || hour === undefined ? "off" : `${hour}:00 UTC`),
    },
  }),
  OWNER_SPEND_LIMIT_PER_DAY_USD: setting({
    group: economics,
    doc: "per owner (an operator renting through the MCP server, docs/mcp.md), per UTC day: a rental is refused, with the figures, when what the owner's leased instances cost today (each $/h over the hours of today it is leased for, through its lease end) plus the new rental's max $/h over its lease hours left today passes it (per agent: `null`/`none` means no owner budget)",
    schema: dollarsPerDay(z.coerce.number()).optional(),
    to: (usd) => usd ?? null,
    at: "economics.ownerSpendLimitPerDayUsd",
    defaultText: "– (no limit)",
    bounds: DOLLARS_PER_DAY_BOUNDS,
    agent: {
      key: "ownerSpendLimitPerDayUsd",
      schema: dollarsPerDay(z.number()).nullable(),
      field: {
        label: "Owner daily budget (USD)",
        input: "number",
        hint: "per operator renting through MCP; none = no budget",
        nullWord: "none",
      },
      show: (usd) => (usd ? `$${usd} per owner per day` : "no owner budget"),
    },
  }),
};
