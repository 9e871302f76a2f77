/**
 * Configuration, read once per host from a plain record of variables and validated with zod.
 * Every variable is a row of the settings table (runtime/settings/table.ts): its schema checks
 * it, its `at` places it in Config. The same names work on both hosts; an empty variable counts
 * as unset. A missing or bad value throws ConfigError naming the variable, so start-up stops with
 * a message a person can act on. Shared code never reads process.env: hosts pass their variables in.
 */
import { z } from "zod";
import { ENV_ROWS, setPath, type EnvShape, type Flatten, type RowConfig } from "./settings/table.ts";

export { APPROVABLE_ACTIONS, databaseUrlProblem, NO_APPROVALS, PROVIDERS } from "./settings/forms.ts";

export type Host = "node" | "worker";

const variables = z.object(Object.fromEntries(ENV_ROWS.map((row) => [row.name, row.schema])) as EnvShape);
type Variables = z.output<typeof variables>;

/** Every variable's name (test/foundation/config-bounds.test.ts checks each numeric one is bounded). */
export const CONFIG_VARIABLES = Object.keys(variables.shape);

/** What no single row decides: the host, and values that depend on several variables or on the host. */
function derived(v: Variables, host: Host, rows: RowConfig) {
  return {
    host,
    databaseUrl: v.DATABASE_URL ?? (host === "node" ? "file:./data/fleetwarden.db" : ""),
    /** No LLM without a key or a base URL: the rules policy decides. */
    llm: v.OPENAI_API_KEY || v.OPENAI_BASE_URL ? { ...rows.llm, apiKey: v.OPENAI_API_KEY ?? "not-needed" } : null,
    scheduler: v.SCHEDULER ?? (host === "worker" || v.QSTASH_TOKEN ? "qstash" : "local"),
    provider: v.PROVIDER ?? (v.VAST_API_KEY ? "vast" : v.RUNPOD_API_KEY ? "runpod" : v.LAMBDA_API_KEY ? "lambda" : "simulator"),
    /** Failed sign-ins and bearer authentications allowed per minute before a one-minute lockout. */
    authThrottle: { ...rows.authThrottle, windowMs: 60_000 },
    /** Channels whose URL an agent's settings set (runtime/agent-settings.ts): checked again where sent, as the environment's are not. */
    agentChannels: [] as string[],
  };
}

export type Config = Flatten<Omit<RowConfig, keyof ReturnType<typeof derived>> & ReturnType<typeof derived>>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Configuration error: ${variable} ${problem}`);
    this.name = "ConfigError";
  }
}

/** Parses the host's variables into a Config, or throws ConfigError naming the first bad one. */
export function parseConfig(vars: Record<string, unknown>, host: Host): Config {
  const present = Object.fromEntries(Object.entries(vars).filter(([, value]) => typeof value === "string" && value.trim() !== ""));
  const parsed = variables.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? "configuration"), issue.message);
  }
  const config = toConfig(parsed.data, host);
  requireForHost(config, parsed.data, host);
  return config;
}

function toConfig(v: Variables, host: Host): Config {
  let rows = {} as RowConfig;
  for (const row of ENV_ROWS) {
    if (!row.at) continue;
    const value = (v as Record<string, unknown>)[row.name];
    rows = setPath(rows, row.at, row.to ? row.to(value) : value);
  }
  return { ...rows, ...derived(v, host, rows) } as Config;
}

function requireForHost(config: Config, v: Variables, host: Host) {
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
    throw new ConfigError(
      "PUBLIC_URL",
      "is required with QStash signing keys: deliveries are checked against PUBLIC_URL/internal/deliveries",
    );
  }
  if (config.scheduler === "qstash") {
    for (const name of ["QSTASH_TOKEN", "QSTASH_CURRENT_SIGNING_KEY", "QSTASH_NEXT_SIGNING_KEY", "PUBLIC_URL"] as const) {
      if (!v[name]) throw new ConfigError(name, "is required when the scheduler is qstash");
    }
  }
}
