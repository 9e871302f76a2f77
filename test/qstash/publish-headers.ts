/**
 * Test support for the QStash fake: reads a publish request's `Upstash-*` headers into a message's
 * schedule the way Upstash documents them (see the sources cited in fake-qstash.ts), refusing what
 * QStash refuses with a BadPublish naming the header.
 */
import type { IncomingHttpHeaders } from "node:http";

export interface PublishSchedule {
  /** ms epoch: not delivered before. */
  notBefore: number;
  retries: number;
  method: string;
  flowControl: { key: string; parallelism: number | null } | null;
}

/** Headers QStash defines for a publish (Upstash-Forward-* are forwarded, not listed). */
const KNOWN_HEADERS = new Set(
  [
    "Delay", "Not-Before", "Deduplication-Id", "Content-Based-Deduplication", "Retries", "Retry-Delay", "Method",
    "Callback", "Failure-Callback", "Timeout", "Flow-Control-Key", "Flow-Control-Value", "Label", "Redact-Fields",
    "Queue-Name", "Cron", "Schedule-Id", "Telemetry-Sdk", "Telemetry-Platform", "Telemetry-Runtime",
  ].map((h) => `upstash-${h.toLowerCase()}`),
);
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
const DELAY_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
/** A Not-Before past this (year 5138) is a millisecond timestamp sent by mistake. */
const MAX_SECONDS = 1e11;

export class BadPublish extends Error {}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** Reads the publish headers into a message's schedule; throws BadPublish naming the header. */
export function readPublish(headers: IncomingHttpHeaders, now: number, maxRetries: number): PublishSchedule {
  for (const name of Object.keys(headers)) {
    if (name.startsWith("upstash-") && !name.startsWith("upstash-forward-") && !KNOWN_HEADERS.has(name)) {
      throw new BadPublish(`unknown header ${name}`);
    }
  }
  let notBefore = now;
  const delay = header(headers, "upstash-delay");
  if (delay !== undefined) {
    const m = /^(\d+)([smhd])$/.exec(delay);
    if (!m) throw new BadPublish(`Upstash-Delay must be a number followed by s, m, h or d: ${delay}`);
    notBefore = now + Number(m[1]) * DELAY_UNITS[m[2]!]! * 1000;
  }
  const nb = header(headers, "upstash-not-before");
  if (nb !== undefined) {
    if (!/^\d+$/.test(nb)) throw new BadPublish(`Upstash-Not-Before must be a unix timestamp in seconds: ${nb}`);
    if (Number(nb) > MAX_SECONDS) throw new BadPublish(`Upstash-Not-Before must be in seconds, not milliseconds: ${nb}`);
    notBefore = Number(nb) * 1000; // wins over Upstash-Delay
  }
  let retries = maxRetries;
  const r = header(headers, "upstash-retries");
  if (r !== undefined) {
    if (!/^\d+$/.test(r)) throw new BadPublish(`Upstash-Retries must be a non-negative integer: ${r}`);
    if (Number(r) > maxRetries) throw new BadPublish(`Upstash-Retries ${r} exceeds the plan's maximum of ${maxRetries}`);
    retries = Number(r);
  }
  const method = (header(headers, "upstash-method") ?? "POST").toUpperCase();
  if (!METHODS.has(method)) throw new BadPublish(`Upstash-Method is not an HTTP method: ${method}`);
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
        if (!/^\d+$/.test(m[2]!) || Number(m[2]) < 1) throw new BadPublish(`Upstash-Flow-Control-Value parallelism must be a positive integer: ${value}`);
        parallelism = Number(m[2]);
      }
    }
    flowControl = { key, parallelism };
  }
  return { notBefore, retries, method, flowControl };
}
