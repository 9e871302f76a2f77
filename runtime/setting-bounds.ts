/**
 * The bounds of every numeric setting and the value forms the rows of the settings table use
 * (runtime/settings/): one constant per bound, read by a row's environment schema and its
 * per-agent schema alike, so a per-agent setting can never go past what its variable accepts.
 * Every time is bounded (a timer or a cookie past its limit breaks at run time, not at start),
 * URLs must be http(s), and a token is trimmed and refused when whitespace is left inside.
 */
import { z } from "zod";

export const HOUR_S = 3600;
export const DAY_S = 24 * HOUR_S;

/** Browsers cap a cookie's lifetime at 400 days (RFC 6265bis); a longer session cannot be set. */
export const SESSION_TTL_MAX_S = 400 * DAY_S;
export const CONTEXT_BUDGET_MAX_TOKENS = 2_000_000;
export const DEBOUNCE_MAX_MS = HOUR_S * 1000;
export const MAX_PENDING_WAKES_MAX = 1000;
export const IDLE_STOP_AFTER_MAX_S = 30 * DAY_S;
export const SPEND_LIMIT_PER_DAY_MAX_USD = 1_000_000;
export const AGENT_MODEL_MAX_CHARS = 128;
export const AGENT_MAX_ITERATIONS_MAX = 50;
export const LLM_TIMEOUT_MAX_MS = 10 * 60 * 1000;
export const RUN_LEASE_MAX_MS = DAY_S * 1000;
/** A time of day-scale work (intervals, timeouts, delays). */
export const INTERVAL_MAX_S = DAY_S;
/** A time of month-scale policy (dedup windows, cooldowns, idle and expiry delays). */
export const WINDOW_MAX_S = 30 * DAY_S;
export const STOPPED_DESTROY_AFTER_MAX_S = 365 * DAY_S;
/** A count per run or per hour that is a guardrail, not a throughput. */
export const GUARD_COUNT_MAX = 100;
export const PER_HOUR_MAX = 10_000;
export const SIMULATOR_FAILURES_PER_HOUR_MAX = 1000;
export const AUTH_FAILURES_MAX = 100_000;

/** Why a URL is not an http(s) URL with a host, or null when it is one. */
export function httpUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a valid URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `must be an http:// or https:// URL (got ${parsed.protocol})`;
  if (!parsed.hostname) return "has no host name";
  return null;
}

/** An http(s) URL with a host (no javascript:, file:, gopher: …), surrounding spaces trimmed. */
export const httpUrl = z
  .string()
  .trim()
  .superRefine((url, ctx) => {
    const problem = httpUrlProblem(url);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** A secret or token: surrounding spaces trimmed, whitespace inside refused (a paste gone wrong). */
export const token = z.string().trim().regex(/^\S+$/, "must not contain spaces or line breaks");
