/**
 * Test support for the QStash fake: reads a publish request's `Upstash-*` headers into a message's
 * schedule the way Upstash documents them (see the sources cited in fake-qstash.ts), refusing what
 * QStash refuses with a BadPublish naming the header.
 *
 * The callback families follow upstash/docs `qstash/openapi.yaml` and `qstash/features/callbacks.mdx`
 * (commit ef0ce4387f723fa1d0bd49d29331a6ec61feb6df): `Upstash-Callback` and
 * `Upstash-Failure-Callback` name a URL that must start with http:// or https://; each is configured
 * by the same headers as a publish under its own prefix (`-Timeout`, `-Retries`, `-Retry-Delay`,
 * `-Delay`, `-Method`) and forwards `-Forward-*` headers. `Upstash-Delay` is `<value><unit>` pairs
 * (s, m, h, d), compound forms such as `1d10h30m` included (openapi.yaml's examples).
 *
 * A deduplication id containing `:` is refused: QStash answers 400
 * `{"error":"DeduplicationId cannot contain ':'"}` (the documentation is silent on the rule; the
 * answer is quoted from superset-sh/superset pull request #3591, "Our prod QStash project
 * (us-east-1) rejects `:` in deduplicationId", and lobehub/lobehub pull request #18778, "QStash 400:
 * DeduplicationId cannot contain colon").
 */
import type { IncomingHttpHeaders } from "node:http";

export interface CallbackConfig {
  url: string;
  /** `Upstash-Forward-*` headers of the callback's own message (from `…-Forward-*`). */
  forward: Record<string, string>;
  /** Its retries (the original message's unless set), method and delay in ms. */
  retries: number | null;
  method: string;
  delayMs: number;
}

export interface PublishSchedule {
  /** ms epoch: not delivered before. */
  notBefore: number;
  retries: number;
  method: string;
  flowControl: { key: string; parallelism: number | null } | null;
  /** Called after every attempt (`Upstash-Callback`). */
  callback: CallbackConfig | null;
  /** Called once the last attempt failed (`Upstash-Failure-Callback`). */
  failureCallback: CallbackConfig | null;
}

/** Headers QStash defines for a publish (Upstash-Forward-* are forwarded, not listed). */
const KNOWN_HEADERS = new Set(
  [
    "Delay",
    "Not-Before",
    "Deduplication-Id",
    "Content-Based-Deduplication",
    "Retries",
    "Retry-Delay",
    "Method",
    "Callback",
    "Failure-Callback",
    "Timeout",
    "Flow-Control-Key",
    "Flow-Control-Value",
    "Label",
    "Redact-Fields",
    "Queue-Name",
    "Cron",
    "Schedule-Id",
    "Telemetry-Sdk",
    "Telemetry-Platform",
    "Telemetry-Runtime",
  ].map((h) => `upstash-${h.toLowerCase()}`),
);
/** What configures a callback under its prefix (callbacks.mdx "Configuring Callbacks"). */
const CALLBACK_SETTINGS = new Set(["timeout", "retries", "retry-delay", "delay", "method"]);
const CALLBACK_PREFIXES = ["upstash-failure-callback-", "upstash-callback-"] as const;
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
const DELAY_UNITS: Record<string, number> = { d: 86400, h: 3600, m: 60, s: 1 };
/** A Not-Before past this (year 5138) is a millisecond timestamp sent by mistake. */
const MAX_SECONDS = 1e11;

export class BadPublish extends Error {}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** True for a header QStash reads (a publish header, a forwarded one, or a callback's). */
function isKnown(name: string): boolean {
  if (!name.startsWith("upstash-") || name.startsWith("upstash-forward-") || KNOWN_HEADERS.has(name)) return true;
  const prefix = CALLBACK_PREFIXES.find((p) => name.startsWith(p));
  if (!prefix) return false;
  const rest = name.slice(prefix.length);
  return rest.startsWith("forward-") || CALLBACK_SETTINGS.has(rest);
}

/**
 * `Upstash-Delay` in seconds: one or more `<number><unit>` pairs, largest unit first, each unit at
 * most once (`50s`, `10h`, `1d10h30m`); anything else is refused.
 */
export function delaySeconds(value: string, name = "Upstash-Delay"): number {
  const pairs = [...value.matchAll(/(\d+)([dhms])/g)];
  const units = pairs.map((p) => p[2]!);
  const ordered = units.every((u, i) => i === 0 || "dhms".indexOf(units[i - 1]!) < "dhms".indexOf(u));
  if (pairs.length === 0 || pairs.map((p) => p[0]).join("") !== value || !ordered) {
    throw new BadPublish(`${name} must be <number><unit> pairs with units d, h, m, s (e.g. 10s, 1d10h30m): ${value}`);
  }
  return pairs.reduce((total, p) => total + Number(p[1]) * DELAY_UNITS[p[2]!]!, 0);
}

function retriesOf(value: string | undefined, name: string, maxRetries: number): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value)) throw new BadPublish(`${name} must be a non-negative integer: ${value}`);
  if (Number(value) > maxRetries) throw new BadPublish(`${name} ${value} exceeds the plan's maximum of ${maxRetries}`);
  return Number(value);
}

function methodOf(value: string | undefined, name: string): string {
  const method = (value ?? "POST").toUpperCase();
  if (!METHODS.has(method)) throw new BadPublish(`${name} is not an HTTP method: ${method}`);
  return method;
}

/** A callback's URL and settings from its header family (`prefix` without the trailing dash). */
function callbackOf(
  headers: IncomingHttpHeaders,
  prefix: "upstash-callback" | "upstash-failure-callback",
  title: string,
  maxRetries: number,
): CallbackConfig | null {
  const url = header(headers, prefix);
  const settings = Object.keys(headers).filter((name) => name.startsWith(`${prefix}-`));
  if (url === undefined) {
    if (settings.length > 0) throw new BadPublish(`${settings[0]} needs ${title}`);
    return null;
  }
  if (!/^https?:\/\/[^/]+/.test(url)) throw new BadPublish(`${title} must be a URL starting with http:// or https://: ${url}`);
  const forward: Record<string, string> = {};
  for (const name of settings) {
    if (name.startsWith(`${prefix}-forward-`))
      forward[`upstash-forward-${name.slice(`${prefix}-forward-`.length)}`] = header(headers, name)!;
  }
  const delay = header(headers, `${prefix}-delay`);
  return {
    url,
    forward,
    retries: retriesOf(header(headers, `${prefix}-retries`), `${title}-Retries`, maxRetries),
    method: methodOf(header(headers, `${prefix}-method`), `${title}-Method`),
    delayMs: delay === undefined ? 0 : delaySeconds(delay, `${title}-Delay`) * 1000,
  };
}

/** Reads the publish headers into a message's schedule; throws BadPublish naming the header. */
export function readPublish(headers: IncomingHttpHeaders, now: number, maxRetries: number): PublishSchedule {
  for (const name of Object.keys(headers)) {
    if (!isKnown(name)) throw new BadPublish(`unknown header ${name}`);
  }
  const dedupId = header(headers, "upstash-deduplication-id");
  if (dedupId?.includes(":")) throw new BadPublish("DeduplicationId cannot contain ':'");
  let notBefore = now;
  const delay = header(headers, "upstash-delay");
  if (delay !== undefined) notBefore = now + delaySeconds(delay) * 1000;
  const nb = header(headers, "upstash-not-before");
  if (nb !== undefined) {
    if (!/^\d+$/.test(nb)) throw new BadPublish(`Upstash-Not-Before must be a unix timestamp in seconds: ${nb}`);
    if (Number(nb) > MAX_SECONDS) throw new BadPublish(`Upstash-Not-Before must be in seconds, not milliseconds: ${nb}`);
    notBefore = Number(nb) * 1000; // wins over Upstash-Delay
  }
  const retries = retriesOf(header(headers, "upstash-retries"), "Upstash-Retries", maxRetries) ?? maxRetries;
  const method = methodOf(header(headers, "upstash-method"), "Upstash-Method");
  const key = header(headers, "upstash-flow-control-key");
  const value = header(headers, "upstash-flow-control-value");
  if ((key === undefined) !== (value === undefined)) {
    throw new BadPublish("Upstash-Flow-Control-Key and Upstash-Flow-Control-Value must be sent together");
  }
  let flowControl: PublishSchedule["flowControl"] = null;
  if (key !== undefined && value !== undefined) {
    if (key.trim() === "") throw new BadPublish("Upstash-Flow-Control-Key is empty");
    let parallelism: number | null = null;
    for (const part of value.split(",")) {
      const m = /^\s*(parallelism|rate|period)=(\d+[smhd]?)\s*$/i.exec(part);
      if (!m) throw new BadPublish(`Upstash-Flow-Control-Value cannot be read: ${value}`);
      if (m[1]!.toLowerCase() === "parallelism") {
        if (!/^\d+$/.test(m[2]!) || Number(m[2]) < 1)
          throw new BadPublish(`Upstash-Flow-Control-Value parallelism must be a positive integer: ${value}`);
        parallelism = Number(m[2]);
      }
    }
    flowControl = { key, parallelism };
  }
  return {
    notBefore,
    retries,
    method,
    flowControl,
    callback: callbackOf(headers, "upstash-callback", "Upstash-Callback", maxRetries),
    failureCallback: callbackOf(headers, "upstash-failure-callback", "Upstash-Failure-Callback", maxRetries),
  };
}
