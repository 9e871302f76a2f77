/**
 * One JSON call to a provider's HTTP API with bounded retries, shared by the RunPod and Lambda
 * Cloud clients (Web APIs only, so it runs in Workers too). What may be retried is the caller's
 * choice per call, because it depends on whether a lost answer could mean the request was carried
 * out: `reads` retries 429, 502-504 and network failures (nothing changed); `refusals` retries only
 * a 429 (the provider refused before acting); `never` sends once (a launch or deploy: a repeat
 * could rent twice). Attempts are capped (`maxAttempts`), back-off doubles from `backoffMs` and
 * honours Retry-After up to 30 s, and no attempt starts once the caller's deadline has aborted.
 * Every failure, and an answer that is not JSON, is a ProviderError, never an empty answer.
 */
import type { z } from "zod";
import { ProviderError } from "./provider.ts";

export interface HttpOptions {
  fetch?: typeof fetch;
  /** How back-off waits; tests pass one that does not. */
  sleep?: (ms: number) => Promise<void>;
  /** Attempts per retryable call, counting the first (default 3). */
  maxAttempts?: number;
  /** First back-off delay, doubled on each retry (default 1000 ms). */
  backoffMs?: number;
  timeoutMs?: number;
}

export type RetryPolicy = "reads" | "refusals" | "never";

export interface JsonCall {
  /** The provider's name in messages ("RunPod", "Lambda Cloud"). */
  provider: string;
  method: string;
  url: string;
  /** What the call is, in messages ("GET /instances", "query myPods"). */
  what: string;
  headers: Record<string, string>;
  body?: unknown;
  retry: RetryPolicy;
  signal?: AbortSignal | undefined;
  /** Reads the provider's own error message out of a failed answer's JSON. */
  errorText?: (json: unknown) => string | null;
}

export interface JsonAnswer {
  status: number;
  json: unknown;
}

export const MAX_RETRY_AFTER_MS = 30_000;
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const wait = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A 2xx answer's JSON, or a ProviderError naming the failure (status kept, 401/403 as a bad key). */
export async function callJson(options: HttpOptions, call: JsonCall): Promise<JsonAnswer> {
  const attempts = call.retry === "never" ? 1 : Math.max(1, options.maxAttempts ?? 3);
  let last: ProviderError | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (call.signal?.aborted) {
      throw new ProviderError(`${call.provider} ${call.what} abandoned: the caller's deadline passed after ${attempt - 1} attempt(s)${last ? ` (last: ${last.message})` : ""}`, last?.status ?? null, true);
    }
    let response: Response;
    try {
      response = await (options.fetch ?? fetch)(call.url, {
        method: call.method,
        headers: { Accept: "application/json", ...(call.body === undefined ? {} : { "Content-Type": "application/json" }), ...call.headers },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: call.signal ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs ?? 30_000), call.signal]) : AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      // A request that never got an answer may still have been carried out: only reads repeat.
      last = new ProviderError(`${call.provider} unreachable (${call.what}): ${String(err)}`, null, call.retry !== "never");
      if (call.retry !== "reads") throw last;
      await backoff(options, attempt, attempts, null, call.signal);
      continue;
    }
    const raw = await response.text();
    const json = tryJson(raw);
    if (response.ok) {
      if (json === undefined) throw new ProviderError(`${call.provider} answered ${call.what} with something that is not JSON`, 502, true);
      return { status: response.status, json };
    }
    last = failure(call, response.status, json === undefined ? raw.trim().slice(0, 300) || "(empty body)" : (call.errorText?.(json) ?? raw.slice(0, 300)));
    const again = response.status === 429 ? call.retry !== "never" : call.retry === "reads" && RETRYABLE_STATUS.has(response.status);
    if (!again) throw last;
    await backoff(options, attempt, attempts, response.headers.get("retry-after"), call.signal);
  }
  throw last!;
}

function failure(call: JsonCall, status: number, detail: string): ProviderError {
  const where = `${call.provider} ${call.what}`;
  if (status === 401 || status === 403) return new ProviderError(`${call.provider} rejected the API key (${status}) on ${call.what}: ${detail}`, status);
  if (status === 429) return new ProviderError(`${where}: rate limited (429), try again later: ${detail}`, 429, true);
  // Only a read is safe to repeat after a 5xx: an action's may mean it was carried out.
  if (RETRYABLE_STATUS.has(status) && call.retry === "reads") return new ProviderError(`${where} failed (${status}): ${detail}`, status, true);
  if (status >= 500) return new ProviderError(`${where} failed (${status}), not retried (it may have been carried out): ${detail}`, status);
  return new ProviderError(`${where} answered ${status}: ${detail}`, status);
}

async function backoff(options: HttpOptions, attempt: number, attempts: number, retryAfter: string | null, signal?: AbortSignal): Promise<void> {
  if (attempt >= attempts || signal?.aborted) return;
  const base = (options.backoffMs ?? 1000) * 2 ** (attempt - 1);
  const told = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : 0;
  const sleeping = (options.sleep ?? wait)(Math.min(Math.max(base, told), MAX_RETRY_AFTER_MS));
  await (signal ? Promise.race([sleeping, new Promise<void>((done) => signal.addEventListener("abort", () => done(), { once: true }))]) : sleeping);
}

function tryJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** `body` checked against `schema`; a mismatch is a retryable 502 naming the first wrong field. */
export function parseAnswer<T extends z.ZodType>(provider: string, schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ProviderError(`${provider} sent a malformed ${what}: ${issue.path.join(".") || "body"}: ${issue.message}`, 502, true);
  }
  return parsed.data;
}
