/**
 * Configuration, read once per host from a plain record of variables and validated with zod.
 * The same names work on both hosts; an empty variable counts as unset. A missing or bad value
 * throws ConfigError naming the variable, so start-up stops with a message a person can act on.
 * Shared code never reads process.env: hosts pass their variables in.
 */
import { z } from "zod";
import {
  AGENT_MAX_ITERATIONS_MAX, AGENT_MODEL_MAX_CHARS, AUTH_FAILURES_MAX, CONTEXT_BUDGET_MAX_TOKENS, DAY_S, DEBOUNCE_MAX_MS,
  GUARD_COUNT_MAX, httpUrl, httpUrlProblem, IDLE_STOP_AFTER_MAX_S, INTERVAL_MAX_S, LLM_TIMEOUT_MAX_MS, MAX_PENDING_WAKES_MAX,
  PER_HOUR_MAX, RUN_LEASE_MAX_MS, SESSION_TTL_MAX_S, SIMULATOR_FAILURES_PER_HOUR_MAX, SPEND_LIMIT_PER_DAY_MAX_USD,
  STOPPED_DESTROY_AFTER_MAX_S, token, WINDOW_MAX_S,
} from "./setting-bounds.ts";

export type Host = "node" | "worker";

const optionalToken = token.optional();
const optionalUrl = httpUrl.optional();
/** A whole number in [min, max]; every numeric variable has both bounds (runtime/setting-bounds.ts). */
const int = (min: number, max: number, why = "") =>
  z.coerce.number().int("must be a whole number").min(min, `must be at least ${min}`).max(max, `must be at most ${max}${why}`);
const positiveInt = (fallback: number, max: number, why?: string) => int(1, max, why).default(fallback);
const nonNegativeInt = (fallback: number, max: number, why?: string) => int(0, max, why).default(fallback);
const nonNegativeNumber = (fallback: number, max: number) =>
  z.coerce.number().min(0, "must be at least 0").max(max, `must be at most ${max}`).default(fallback);

/**
 * Action kinds an approval can guard. The same list as fleet/actions/action-types.ts ACTION_KINDS (runtime
 * sits below fleet, so it cannot import it; test/security/config-refusals.test.ts checks they agree).
 */
export const APPROVABLE_ACTIONS = ["start", "stop", "reboot", "destroy", "label", "replace"] as const;

/** Fleet providers, as fleet/providers/provider.ts PROVIDER_KINDS (runtime sits below fleet). */
export const PROVIDERS = ["vast", "runpod", "lambda", "simulator"] as const;

/** The libSQL URL forms both clients accept: an embedded file, memory, or a remote server. */
const databaseUrl = z.string().superRefine((url, ctx) => {
  const problem = databaseUrlProblem(url);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export function databaseUrlProblem(url: string): string | null {
  if (url === ":memory:") return null;
  if (url.startsWith("file:")) return url.length > "file:".length ? null : "has no path after file: (e.g. file:./data/fleetwarden.db)";
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (!scheme) return `is not a libSQL URL: use file:<path>, :memory:, libsql://<host> or https://<host> (got "${url.slice(0, 60)}")`;
  if (!["libsql", "http", "https", "ws", "wss"].includes(scheme)) {
    return `has the unsupported scheme ${scheme}:// (use file:<path>, :memory:, libsql://, http(s):// or ws(s)://)`;
  }
  try {
    if (!new URL(url).hostname) return "has no host name";
  } catch {
    return "is not a valid URL";
  }
  return null;
}

/** `whsec_` + base64 of 24–64 bytes, the Standard Webhooks secret form. */
const webhookSecret = z.string().trim().superRefine((secret, ctx) => {
  const body = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : null;
  const bytes = body && /^[A-Za-z0-9+/]+={0,2}$/.test(body) && body.length % 4 === 0 ? (body.length / 4) * 3 - (body.match(/=+$/)?.[0].length ?? 0) : -1;
  if (bytes < 24 || bytes > 64) ctx.addIssue({ code: "custom", message: "must be whsec_ followed by the base64 of 24 to 64 random bytes" });
});

/** `none` is the explicit empty list: a blank list (`,`) is a typo, not a decision to guard nothing. */
export const NO_APPROVALS = "none";

const approvalList = z.string().superRefine((list, ctx) => {
  if (list.trim() === NO_APPROVALS) return;
  const names = list.split(",").map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) {
    ctx.addIssue({ code: "custom", message: `lists no action: write "${NO_APPROVALS}" to require no approvals (known: ${APPROVABLE_ACTIONS.join(", ")})` });
    return;
  }
  const unknown = names.filter((s) => !(APPROVABLE_ACTIONS as readonly string[]).includes(s));
  if (unknown.length > 0) ctx.addIssue({ code: "custom", message: `names unknown action ${unknown.map((u) => `"${u}"`).join(", ")} (known: ${APPROVABLE_ACTIONS.join(", ")})` });
});

/** Like approvalList, but empty (unset) means none too: APPROVAL_TWO_PERSON is opt-in. */
const optionalActionList = z.string().superRefine((list, ctx) => {
  if (list.trim() === NO_APPROVALS) return;
  const unknown = list.split(",").map((s) => s.trim()).filter(Boolean).filter((s) => !(APPROVABLE_ACTIONS as readonly string[]).includes(s));
  if (unknown.length > 0) ctx.addIssue({ code: "custom", message: `names unknown action ${unknown.map((u) => `"${u}"`).join(", ")} (known: ${APPROVABLE_ACTIONS.join(", ")})` });
});

const flag = z.enum(["true", "false"], "must be true or false").transform((v) => v === "true");

/** The actions a list names; `none` names none. */
function approvalActions(list: string): string[] {
  return list.trim() === NO_APPROVALS ? [] : list.split(",").map((s) => s.trim()).filter(Boolean);
}

/**
 * PUBLIC_URL is an origin: the CSRF check compares a request's Origin with it and QStash delivers
 * below it, so it must be http(s) with a host and no path, query or credentials (`javascript:x`
 * has the origin `null`, which a request's `Origin: null` would match). Kept as the bare origin.
 */
const publicOrigin = httpUrl
  .superRefine((url, ctx) => {
    if (httpUrlProblem(url)) return;
    const u = new URL(url);
    if (u.pathname !== "/" || u.search || u.hash || u.username || u.password) {
      ctx.addIssue({ code: "custom", message: `must be an origin such as https://fleet.example.com (no path, query or credentials; got "${url.slice(0, 80)}")` });
    }
  })
  .transform((url) => (httpUrlProblem(url) ? url : new URL(url).origin));

const variables = z.object({
  DATABASE_URL: databaseUrl.optional(),
  DATABASE_AUTH_TOKEN: optionalToken,
  ADMIN_TOKEN: token.min(16, "must be at least 16 characters").max(512, "must be at most 512 characters").optional(),
  WEBHOOK_SECRET: webhookSecret.optional(),
  /** The Vast.ai notification webhook's `webhook_secret`, as Vast.ai returned it (fleet/providers/vast-signature.ts). */
  VAST_WEBHOOK_SECRET: optionalToken,
  OPENAI_API_KEY: optionalToken,
  OPENAI_BASE_URL: optionalUrl,
  AGENT_MODEL: z.string().trim().max(AGENT_MODEL_MAX_CHARS, `must be at most ${AGENT_MODEL_MAX_CHARS} characters`).default("gpt-4o-mini"),
  /** `auto` sends tool_choice:"auto"; `none-sent` omits it (vLLM without --enable-auto-tool-choice). */
  LLM_TOOL_CHOICE: z.enum(["auto", "none-sent"]).default("auto"),
  SCHEDULER: z.enum(["local", "qstash"]).optional(),
  QSTASH_URL: optionalUrl,
  QSTASH_TOKEN: optionalToken,
  QSTASH_CURRENT_SIGNING_KEY: optionalToken,
  QSTASH_NEXT_SIGNING_KEY: optionalToken,
  QSTASH_RETRIES: nonNegativeInt(3, 20),
  QSTASH_FLOW_PREFIX: z.string().regex(/^[A-Za-z0-9-]{1,32}$/, "must be 1-32 letters, digits or '-'").optional(),
  PUBLIC_URL: publicOrigin.optional(),
  /** Which provider the default agent (and agents without a provider setting) supervises; unset: the one whose key is set, else the simulator. */
  PROVIDER: z.enum(PROVIDERS).optional(),
  VAST_API_KEY: optionalToken,
  VAST_URL: httpUrl.default("https://console.vast.ai"),
  RUNPOD_API_KEY: optionalToken,
  /** RunPod's GraphQL endpoint (runpod-python: https://api.runpod.io/graphql). */
  RUNPOD_URL: httpUrl.default("https://api.runpod.io/graphql"),
  LAMBDA_API_KEY: optionalToken,
  /** Lambda Cloud's API base (SkyPilot/dstack: https://cloud.lambdalabs.com/api/v1). */
  LAMBDA_URL: httpUrl.default("https://cloud.lambdalabs.com/api/v1"),
  /** Replace an instance offline, unknown or gone this long (0 = never propose a replacement). */
  REPLACE_AFTER_S: nonNegativeInt(1800, WINDOW_MAX_S),
  /** A replacement's offer may cost at most this × the old instance's price. */
  REPLACE_MAX_PRICE_FACTOR: z.coerce.number().min(1, "must be at least 1").max(10, "must be at most 10").default(1.25),
  /** A replacement's host must have at least this reliability (0-1). */
  REPLACE_MIN_RELIABILITY: z.coerce.number().min(0, "must be at least 0").max(1, "must be at most 1").default(0.95),
  DEBOUNCE_HUMAN_MS: nonNegativeNumber(2000, DEBOUNCE_MAX_MS),
  DEBOUNCE_STATE_MS: nonNegativeNumber(10000, DEBOUNCE_MAX_MS),
  RUN_LEASE_MS: positiveInt(600000, RUN_LEASE_MAX_MS),
  CONTEXT_BUDGET_TOKENS: positiveInt(30000, CONTEXT_BUDGET_MAX_TOKENS),
  LLM_TIMEOUT_MS: positiveInt(60000, LLM_TIMEOUT_MAX_MS),
  LLM_MAX_RETRIES: nonNegativeInt(2, 10),
  AGENT_MAX_ITERATIONS: positiveInt(8, AGENT_MAX_ITERATIONS_MAX),
  RULES_MAX_RESTARTS_PER_HOUR: nonNegativeInt(3, GUARD_COUNT_MAX),
  MAX_PENDING_WAKES: positiveInt(50, MAX_PENDING_WAKES_MAX),
  MAX_EVENT_ATTEMPTS: positiveInt(3, GUARD_COUNT_MAX),
  RECONCILE_INTERVAL_S: positiveInt(60, INTERVAL_MAX_S),
  CRON_INLINE_AGENTS: nonNegativeInt(5, 1000),
  CRON_INLINE_RUNS: nonNegativeInt(1, 100),
  HEARTBEAT_TIMEOUT_S: positiveInt(300, INTERVAL_MAX_S),
  SIMULATOR_INSTANCES: nonNegativeInt(4, 10_000),
  SIMULATOR_FAILURE_RATE: nonNegativeNumber(2, SIMULATOR_FAILURES_PER_HOUR_MAX),
  APPROVAL_REQUIRED_ACTIONS: approvalList.default("destroy,replace"),
  /** Kinds whose approval must come from another operator than the one who asked (default none). */
  APPROVAL_TWO_PERSON: optionalActionList.default(NO_APPROVALS),
  /** A pending approval older than this expires and does nothing. */
  APPROVAL_EXPIRES_S: positiveInt(86400, WINDOW_MAX_S),
  /** One reminder of a pending approval this long after it was asked (0 = none). */
  APPROVAL_REMIND_S: nonNegativeInt(3600, WINDOW_MAX_S),
  /** The Slack app's signing secret: POST /integrations/slack/interactions verifies with it. */
  SLACK_SIGNING_SECRET: optionalToken,
  /**
   * Lets channel URLs set through the agents API (and Slack response_url) be http:, loopback,
   * private or link-local (local setups); otherwise they must be https: to a public host.
   */
  ALLOW_PRIVATE_URLS: flag.default(false),
  /** The request header that carries the client's address behind a proxy (e.g. cf-connecting-ip); unset: the TCP peer. */
  TRUST_PROXY: z.string().trim().toLowerCase().regex(/^[a-z0-9-]{1,64}$/, "must be a header name, e.g. x-forwarded-for or cf-connecting-ip").optional(),
  /** How many instances only known from webhooks (no provider lists them) one agent keeps. */
  WEBHOOK_ONLY_INSTANCES_MAX: nonNegativeInt(50, 10_000),
  /** After a webhook secret rotation, the previous secret still verifies this long. */
  WEBHOOK_SECRET_GRACE_S: nonNegativeInt(86400, WINDOW_MAX_S),
  /** A model reply or tool argument longer than this is cut before it is counted or stored. */
  LLM_OUTPUT_MAX_CHARS: positiveInt(32768, 1_048_576),
  SLACK_WEBHOOK_URL: optionalUrl,
  DISCORD_WEBHOOK_URL: optionalUrl,
  /** Discord's thread (channel) names are 1-100 characters. */
  DISCORD_THREAD_NAME: z.string().trim().max(100, "must be at most 100 characters (Discord's limit for a thread name)").optional(),
  NTFY_URL: optionalUrl,
  NOTIFY_DEDUP_WINDOW_S: nonNegativeInt(3600, WINDOW_MAX_S),
  ACTION_RATE_LIMIT_PER_HOUR: positiveInt(6, PER_HOUR_MAX),
  WAKE_MIN_DELAY_S: nonNegativeInt(60, INTERVAL_MAX_S),
  WAKES_PER_HOUR: nonNegativeInt(12, PER_HOUR_MAX),
  APPROVAL_REJECT_COOLDOWN_S: nonNegativeInt(86400, WINDOW_MAX_S),
  LOADING_TIMEOUT_S: positiveInt(900, INTERVAL_MAX_S),
  IDLE_GPU_UTIL_PCT: nonNegativeNumber(5, 100),
  TELEMETRY_STALE_S: positiveInt(600, INTERVAL_MAX_S),
  IDLE_NOTIFY_AFTER_S: nonNegativeInt(1800, WINDOW_MAX_S),
  IDLE_STOP_AFTER_S: nonNegativeInt(0, IDLE_STOP_AFTER_MAX_S),
  SPEND_LIMIT_PER_DAY_USD: z.coerce.number().positive("must be more than 0").max(SPEND_LIMIT_PER_DAY_MAX_USD, `must be at most ${SPEND_LIMIT_PER_DAY_MAX_USD}`).optional(),
  STOPPED_DESTROY_AFTER_S: nonNegativeInt(0, STOPPED_DESTROY_AFTER_MAX_S),
  EXPIRY_WARN_S: nonNegativeInt(86400, WINDOW_MAX_S),
  AGENT_MODE: z.enum(["act", "shadow"]).default("act"),
  LLM_ACTIONS_PER_RUN: nonNegativeInt(3, 1000),
  ACTIONS_PER_HOUR: nonNegativeInt(12, PER_HOUR_MAX),
  NOTIFICATIONS_PER_RUN: nonNegativeInt(3, 1000),
  NOTIFICATIONS_PER_HOUR: nonNegativeInt(20, PER_HOUR_MAX),
  APPROVALS_PER_RUN: nonNegativeInt(3, 1000),
  APPROVALS_PER_HOUR: nonNegativeInt(10, PER_HOUR_MAX),
  LLM_TRANSCRIPT_DAYS: int(1, 3650).default(14),
  WATCHDOG_FAILED_RUNS: positiveInt(3, GUARD_COUNT_MAX),
  WATCHDOG_NOTIFY_PER_HOUR: positiveInt(10, GUARD_COUNT_MAX),
  /** The Node host's SQLite durability: full (an accepted event survives power loss) or normal (faster; may lose the last commits). */
  DATABASE_SYNC: z.enum(["full", "normal"]).default("full"),
  PORT: nonNegativeInt(8787, 65535),
  /** The Node host's bind address (the Worker ignores it); 0.0.0.0 or :: exposes it. */
  HOST: z.string().trim().regex(/^[\w.:-]{1,253}$/, "must be a host name or IP address, e.g. 127.0.0.1 or 0.0.0.0").default("127.0.0.1"),
  SESSION_TTL_S: positiveInt(7 * DAY_S, SESSION_TTL_MAX_S, " (400 days: browsers refuse a longer cookie)"),
  SESSION_IDLE_TIMEOUT_S: positiveInt(DAY_S, SESSION_TTL_MAX_S, " (400 days: browsers refuse a longer cookie)"),
  AUTH_FAILURES_PER_ADDRESS: positiveInt(10, AUTH_FAILURES_MAX),
  AUTH_FAILURES_GLOBAL: positiveInt(100, AUTH_FAILURES_MAX),
});

/** Every variable's name (test/foundation/config-bounds.test.ts checks each numeric one is bounded). */
export const CONFIG_VARIABLES = Object.keys(variables.shape);

export type Config = ReturnType<typeof toConfig>;

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Configuration error: ${variable} ${problem}`);
    this.name = "ConfigError";
  }
}

/** Parses the host's variables into a Config, or throws ConfigError naming the first bad one. */
export function parseConfig(vars: Record<string, unknown>, host: Host): Config {
  const present = Object.fromEntries(
    Object.entries(vars).filter(([, value]) => typeof value === "string" && value.trim() !== ""),
  );
  const parsed = variables.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? "configuration"), issue.message);
  }
  const config = toConfig(parsed.data, host);
  requireForHost(config, parsed.data, host);
  return config;
}

function toConfig(v: z.infer<typeof variables>, host: Host) {
  const scheduler = v.SCHEDULER ?? (host === "worker" || v.QSTASH_TOKEN ? "qstash" : "local");
  return {
    host,
    databaseUrl: v.DATABASE_URL ?? (host === "node" ? "file:./data/fleetwarden.db" : ""),
    databaseAuthToken: v.DATABASE_AUTH_TOKEN,
    adminToken: v.ADMIN_TOKEN,
    webhookSecret: v.WEBHOOK_SECRET,
    vastWebhookSecret: v.VAST_WEBHOOK_SECRET,
    llm:
      v.OPENAI_API_KEY || v.OPENAI_BASE_URL
        ? {
            apiKey: v.OPENAI_API_KEY ?? "not-needed",
            baseUrl: v.OPENAI_BASE_URL,
            model: v.AGENT_MODEL,
            timeoutMs: v.LLM_TIMEOUT_MS,
            maxRetries: v.LLM_MAX_RETRIES,
            toolChoice: v.LLM_TOOL_CHOICE,
          }
        : null,
    scheduler,
    qstash: {
      url: v.QSTASH_URL,
      token: v.QSTASH_TOKEN,
      currentSigningKey: v.QSTASH_CURRENT_SIGNING_KEY,
      nextSigningKey: v.QSTASH_NEXT_SIGNING_KEY,
      retries: v.QSTASH_RETRIES,
      /** Prefix of every flow-control key; unset means a short hash of PUBLIC_URL (see qstash-scheduler). */
      flowPrefix: v.QSTASH_FLOW_PREFIX,
    },
    publicUrl: v.PUBLIC_URL,
    provider: v.PROVIDER ?? (v.VAST_API_KEY ? "vast" : v.RUNPOD_API_KEY ? "runpod" : v.LAMBDA_API_KEY ? "lambda" : "simulator"),
    vast: { apiKey: v.VAST_API_KEY, url: v.VAST_URL },
    runpod: { apiKey: v.RUNPOD_API_KEY, url: v.RUNPOD_URL },
    lambda: { apiKey: v.LAMBDA_API_KEY, url: v.LAMBDA_URL },
    /** When a dead instance becomes a replacement proposal, and what a replacement may rent (fleet/replacement*.ts). */
    replace: {
      afterMs: v.REPLACE_AFTER_S * 1000,
      maxPriceFactor: v.REPLACE_MAX_PRICE_FACTOR,
      minReliability: v.REPLACE_MIN_RELIABILITY,
    },
    simulator: { instances: v.SIMULATOR_INSTANCES, failureRatePerHour: v.SIMULATOR_FAILURE_RATE },
    debounceHumanMs: v.DEBOUNCE_HUMAN_MS,
    debounceStateMs: v.DEBOUNCE_STATE_MS,
    runLeaseMs: v.RUN_LEASE_MS,
    contextBudgetTokens: v.CONTEXT_BUDGET_TOKENS,
    agentMaxIterations: v.AGENT_MAX_ITERATIONS,
    rulesMaxRestartsPerHour: v.RULES_MAX_RESTARTS_PER_HOUR,
    maxPendingWakes: v.MAX_PENDING_WAKES,
    maxEventAttempts: v.MAX_EVENT_ATTEMPTS,
    reconcileIntervalMs: v.RECONCILE_INTERVAL_S * 1000,
    /**
     * What one cron invocation does itself: the ticks of up to `inlineAgents` agents (the rest that
     * have something due are fanned out), and, while the scheduler refuses publishes, up to
     * `inlineRuns` due runs (jobs/scheduled-tick.ts).
     */
    cron: { inlineAgents: v.CRON_INLINE_AGENTS, inlineRuns: v.CRON_INLINE_RUNS },
    heartbeatTimeoutMs: v.HEARTBEAT_TIMEOUT_S * 1000,
    approvalRequired: approvalActions(v.APPROVAL_REQUIRED_ACTIONS),
    approvalTwoPerson: approvalActions(v.APPROVAL_TWO_PERSON),
    approvalExpiresMs: v.APPROVAL_EXPIRES_S * 1000,
    approvalRemindMs: v.APPROVAL_REMIND_S * 1000,
    slackSigningSecret: v.SLACK_SIGNING_SECRET,
    allowPrivateUrls: v.ALLOW_PRIVATE_URLS,
    trustProxyHeader: v.TRUST_PROXY ?? null,
    webhookOnlyInstancesMax: v.WEBHOOK_ONLY_INSTANCES_MAX,
    webhookSecretGraceMs: v.WEBHOOK_SECRET_GRACE_S * 1000,
    llmOutputMaxChars: v.LLM_OUTPUT_MAX_CHARS,
    databaseSync: v.DATABASE_SYNC,
    channels: { slack: v.SLACK_WEBHOOK_URL, discord: v.DISCORD_WEBHOOK_URL, ntfy: v.NTFY_URL },
    /** Sent as `thread_name`: a Discord forum channel's webhook refuses a post without one. */
    discordThreadName: v.DISCORD_THREAD_NAME,
    notifyDedupWindowMs: v.NOTIFY_DEDUP_WINDOW_S * 1000,
    actionRateLimitPerHour: v.ACTION_RATE_LIMIT_PER_HOUR,
    wakeMinDelayMs: v.WAKE_MIN_DELAY_S * 1000,
    wakesPerHour: v.WAKES_PER_HOUR,
    approvalRejectCooldownMs: v.APPROVAL_REJECT_COOLDOWN_S * 1000,
    loadingTimeoutMs: v.LOADING_TIMEOUT_S * 1000,
    /**
     * Fleet economics (fleet/economics/idle.ts, fleet/economics/spend.ts): idle is utilisation below `idleGpuUtilPct`
     * on telemetry fresher than `telemetryStaleMs`; 0 turns a delay off; no spend limit when null.
     */
    economics: {
      idleGpuUtilPct: v.IDLE_GPU_UTIL_PCT,
      telemetryStaleMs: v.TELEMETRY_STALE_S * 1000,
      idleNotifyAfterMs: v.IDLE_NOTIFY_AFTER_S * 1000,
      idleStopAfterMs: v.IDLE_STOP_AFTER_S * 1000,
      spendLimitPerDayUsd: v.SPEND_LIMIT_PER_DAY_USD ?? null,
      stoppedDestroyAfterMs: v.STOPPED_DESTROY_AFTER_S * 1000,
      expiryWarnMs: v.EXPIRY_WARN_S * 1000,
    },
    /** act: decisions reach the provider; shadow: they are recorded as proposals only. */
    mode: v.AGENT_MODE,
    /** Bounds on what any one run, and any one hour of an agent, can do (fleet/actions/bounds.ts). */
    bounds: {
      llmActionsPerRun: v.LLM_ACTIONS_PER_RUN,
      actionsPerHour: v.ACTIONS_PER_HOUR,
      notificationsPerRun: v.NOTIFICATIONS_PER_RUN,
      notificationsPerHour: v.NOTIFICATIONS_PER_HOUR,
      approvalsPerRun: v.APPROVALS_PER_RUN,
      approvalsPerHour: v.APPROVALS_PER_HOUR,
    },
    llmTranscriptDays: v.LLM_TRANSCRIPT_DAYS,
    watchdogFailedRuns: v.WATCHDOG_FAILED_RUNS,
    watchdogNotifyPerHour: v.WATCHDOG_NOTIFY_PER_HOUR,
    port: v.PORT,
    bindHost: v.HOST,
    session: { ttlMs: v.SESSION_TTL_S * 1000, idleMs: v.SESSION_IDLE_TIMEOUT_S * 1000 },
    /** Failed sign-ins and bearer authentications allowed per minute before a one-minute lockout. */
    authThrottle: { perAddress: v.AUTH_FAILURES_PER_ADDRESS, global: v.AUTH_FAILURES_GLOBAL, windowMs: 60_000 },
  };
}

function requireForHost(config: Config, v: z.infer<typeof variables>, host: Host) {
  if (host === "worker") {
    if (!v.DATABASE_URL) throw new ConfigError("DATABASE_URL", "is required on Workers (a libsql:// Turso URL)");
    if (v.DATABASE_URL.startsWith("file:") || v.DATABASE_URL === ":memory:") {
      throw new ConfigError("DATABASE_URL", "must be a remote libsql:// or https:// URL on Workers (no local files there)");
    }
    if (!v.ADMIN_TOKEN) throw new ConfigError("ADMIN_TOKEN", "is required on Workers (wrangler secret put ADMIN_TOKEN)");
  }
  // Without PUBLIC_URL a delivery's `sub` claim (its destination) could not be checked.
  if (Boolean(v.QSTASH_CURRENT_SIGNING_KEY) !== Boolean(v.QSTASH_NEXT_SIGNING_KEY)) {
    const missing = v.QSTASH_CURRENT_SIGNING_KEY ? "QSTASH_NEXT_SIGNING_KEY" : "QSTASH_CURRENT_SIGNING_KEY";
    throw new ConfigError(missing, "is required with the other QStash signing key (QStash rotates between the two)");
  }
  if ((v.QSTASH_CURRENT_SIGNING_KEY || v.QSTASH_NEXT_SIGNING_KEY) && !v.PUBLIC_URL) {
    throw new ConfigError("PUBLIC_URL", "is required with QStash signing keys: deliveries are checked against PUBLIC_URL/internal/deliveries");
  }
  if (config.scheduler === "qstash") {
    for (const name of ["QSTASH_TOKEN", "QSTASH_CURRENT_SIGNING_KEY", "QSTASH_NEXT_SIGNING_KEY", "PUBLIC_URL"] as const) {
      if (!v[name]) throw new ConfigError(name, "is required when the scheduler is qstash");
    }
  }
}
