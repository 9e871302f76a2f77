/** Rows of the settings table: the database, the Node host, and the scheduler (local or QStash). */
import { z } from "zod";
import { databaseUrl, flag, optionalToken, optionalUrl, publicOrigin } from "./forms.ts";
import { parseOtlpHeaders } from "../otlp-tracer.ts";
import { whole } from "./numbers.ts";
import { setting } from "./setting.ts";

const group = "Database and hosting";
const scheduler = "Scheduler";

export const HOSTING_ROWS = {
  DATABASE_URL: setting({
    group,
    doc: "libSQL URL: `file:<path>`, `:memory:`, `libsql://`, `http(s)://` or `ws(s)://` (a remote URL is required on Workers)",
    schema: databaseUrl.optional(),
    at: "databaseUrl",
    defaultText: "`file:./data/fleetwarden.db` (Node)",
    bounds: "`file:<path>`, `:memory:`, `libsql://`, `http(s)://`, `ws(s)://`",
  }),
  DATABASE_AUTH_TOKEN: setting({ group, doc: "Turso auth token", schema: optionalToken, at: "databaseAuthToken", secret: true }),
  DATABASE_SYNC: setting({
    group,
    doc: "the Node host's embedded database durability: `full` fsyncs every commit, so an accepted webhook or message survives a power loss; `normal` is faster, but a power loss can lose the last commits",
    schema: z.enum(["full", "normal"]).default("full"),
    at: "databaseSync",
  }),
  PORT: setting({ group, doc: "Node host port (a port in use is refused)", ...whole(0, 65535, 8787), at: "port" }),
  HOST: setting({
    group,
    doc: "Node host bind address (the Worker ignores it); loopback by default, `0.0.0.0` or `::` exposes it (preferably behind a TLS-terminating reverse proxy)",
    schema: z
      .string()
      .trim()
      .regex(/^[\w.:-]{1,253}$/, "must be a host name or IP address, e.g. 127.0.0.1 or 0.0.0.0")
      .default("127.0.0.1"),
    at: "bindHost",
    bounds: "a host name or IP address",
  }),
  PUBLIC_URL: setting({
    group,
    doc: "public origin (`http(s)://host[:port]`, no path, query or credentials); QStash delivers to `PUBLIC_URL/internal/deliveries` (required with QStash signing keys)",
    schema: publicOrigin.optional(),
    at: "publicUrl",
    bounds: "an `http(s)://` origin",
  }),
  SCHEDULER: setting({
    group: scheduler,
    doc: "delayed delivery adapter: `local` or `qstash`",
    schema: z.enum(["local", "qstash"]).optional(),
    at: "scheduler",
    defaultText: "`local` on Node (`qstash` with `QSTASH_TOKEN`), `qstash` on Workers",
  }),
  QSTASH_URL: setting({
    group: scheduler,
    doc: "QStash API base (for a regional endpoint)",
    schema: optionalUrl,
    at: "qstash.url",
    defaultText: "QStash",
  }),
  QSTASH_TOKEN: setting({
    group: scheduler,
    doc: "QStash publish token (required with `qstash`)",
    schema: optionalToken,
    at: "qstash.token",
    secret: true,
  }),
  QSTASH_CURRENT_SIGNING_KEY: setting({
    group: scheduler,
    doc: "QStash current signing key (required with `qstash`, and with the next key)",
    schema: optionalToken,
    at: "qstash.currentSigningKey",
    secret: true,
  }),
  QSTASH_NEXT_SIGNING_KEY: setting({
    group: scheduler,
    doc: "QStash next signing key (required with `qstash`, and with the current key)",
    schema: optionalToken,
    at: "qstash.nextSigningKey",
    secret: true,
  }),
  QSTASH_RETRIES: setting({ group: scheduler, doc: "delivery retries QStash makes", ...whole(0, 20, 3), at: "qstash.retries" }),
  QSTASH_FLOW_PREFIX: setting({
    group: scheduler,
    doc: "the deployment's prefix of every QStash flow-control key and deduplication id, so deployments sharing one QStash token never serialise or drop each other's messages",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,32}$/, "must be 1-32 letters, digits or '-'")
      .optional(),
    at: "qstash.flowPrefix",
    defaultText: "short hash of `PUBLIC_URL`",
    bounds: "1–32 letters, digits, `-`",
  }),
  CRON_INLINE_AGENTS: setting({
    group: scheduler,
    doc: "agents whose tick each cron invocation runs itself; the due agents past it get a tick delivery through the scheduler",
    ...whole(0, 1000, 5),
    at: "cron.inlineAgents",
  }),
  CRON_INLINE_RUNS: setting({
    group: scheduler,
    doc: "while the scheduler refuses publishes (QStash at its quota, down), due runs each cron invocation performs itself, oldest first",
    ...whole(0, 100, 1),
    at: "cron.inlineRuns",
  }),
  ENV_FILE: setting({
    group,
    doc: "the Node host first reads this file of `KEY=value` lines (dotenv syntax) into its environment; a variable already set wins, so the shell or systemd can override the file. Named and missing, start-up is refused; the Worker ignores it (Workers read `wrangler secret`s)",
    schema: z.string().trim().min(1).max(4096).optional(),
    defaultText: "`.env` in the working directory, when present",
    bounds: "a file path",
  }),
  METRICS_TOKEN: setting({
    group,
    doc: "a bearer token that may read `GET /metrics` (and nothing else), for a Prometheus scraper; any operator's token (viewer or above) reads it too",
    schema: z.string().trim().min(16, "must be at least 16 characters").max(512, "must be at most 512 characters").optional(),
    at: "metricsToken",
    secret: true,
    bounds: "16–512 characters",
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting({
    group,
    doc: "an OTLP/HTTP collector's base URL: each run's spans (the run, its LLM calls, its provider actions) are sent to `<URL>/v1/traces` as JSON when the run finishes (docs/operations.md, Traces); unset, nothing is exported",
    schema: optionalUrl,
    at: "otel.endpoint",
    bounds: "an `http(s)://` URL",
  }),
  OTEL_EXPORTER_OTLP_HEADERS: setting({
    group,
    doc: "headers sent with every export, `key=value` pairs separated by commas, values percent-encoded (the OpenTelemetry SDK's format), e.g. `authorization=Bearer%20abc`",
    schema: z
      .string()
      .trim()
      .max(8192, "must be at most 8192 characters")
      .refine((text) => parseOtlpHeaders(text) !== null, "must be key=value pairs separated by commas (values percent-encoded)")
      .optional(),
    to: (text) => (text ? (parseOtlpHeaders(text) ?? {}) : {}),
    at: "otel.headers",
    secret: true,
    bounds: "`key=value,key2=value2`",
  }),
  OTEL_SERVICE_NAME: setting({
    group,
    doc: "the `service.name` resource attribute of exported spans",
    schema: z.string().trim().min(1).max(128, "must be at most 128 characters").default("fleetwarden"),
    at: "otel.serviceName",
    bounds: "1–128 characters",
  }),
  OTEL_CAPTURE_CONTENT: setting({
    group,
    doc: "`true` adds the messages sent to and received from the LLM to its spans (`gen_ai.input.messages`, `gen_ai.output.messages`); they can hold fleet data and operators' words, so it is off unless opted in",
    schema: flag.default(false),
    at: "otel.captureContent",
    bounds: "`true` or `false`",
  }),
};
