/**
 * The one HTTP client of the Vast.ai, RunPod and Lambda Cloud providers (Web APIs only, so it runs
 * in Workers too): `send` is every request (the client's timeout joined to the caller's deadline),
 * `callJson` one JSON call with bounded retries. What may be retried is the caller's choice per
 * call, because it depends on whether a lost answer could mean the request was carried out:
 * - `reads` repeats a 429, a 502-504 and any network failure (nothing changed, or repeating is
 *   harmless: Vast.ai repeats its actions so, as vast-cli does);
 * - `refusals` repeats only a 429 (the provider refused before acting);
 * - `unacted`, a create, repeats only what the provider cannot have acted on: a 429 and a refused
 *   connection (nothing was sent);
 * - `never` sends once (a launch whose rate limit is the caller's to schedule).
 * After `unacted` and `never` every failure but those two is final, not retryable by the caller
 * either: the provider may have acted, and a second create is a second bill (`onceOnly`).
 * Attempts are capped (`maxAttempts`), back-off doubles from `backoffMs` and honours Retry-After
 * up to 30 s (a 429 waits at least the endpoint's documented interval, `rateIntervalMs`), and no attempt starts once the caller's deadline has aborted. Every failure, and an
 * answer that is not JSON, is a ProviderError, never an empty answer.
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

export type RetryPolicy = "reads" | "refusals" | "unacted" | "never";

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
  /**
   * The call removes what it names: a 404 on a retry means an earlier attempt, whose answer was
   * lost, already did it. Answered `{ status: 404, json: null }` instead of an error.
   */
  goneOnRetryIsDone?: boolean;
  /** A 2xx with an empty body is a success (answered `json: null`): the endpoint documents no content. */
  emptyIsOk?: boolean;
  /** The provider's minimum interval between requests to this endpoint: a 429 is repeated no sooner. */
  rateIntervalMs?: number;
}

export interface JsonAnswer {
  status: number;
  json: unknown;
}

export const MAX_RETRY_AFTER_MS = 30_000;
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const wait = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** How the client waits (the test's sleep, else a timer). */
export const pause = (options: HttpOptions, ms: number): Promise<void> => (options.sleep ?? wait)(ms);

/** One request, abandoned at the client's timeout or the caller's deadline, whichever is first. */
export function send(
  options: HttpOptions,
  url: string | URL,
  init: Omit<RequestInit, "signal">,
  deadline?: AbortSignal,
): Promise<Response> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  return (options.fetch ?? fetch)(url, { ...init, signal: deadline ? AbortSignal.any([timeout, deadline]) : timeout });
}

/** A 2xx answer's JSON, or a ProviderError naming the failure (status kept, 401/403 as a bad key). */
export async function callJson(options: HttpOptions, call: JsonCall): Promise<JsonAnswer> {
  const attempts = call.retry === "never" ? 1 : Math.max(1, options.maxAttempts ?? 3);
  let last: ProviderError | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (call.signal?.aborted) {
      throw new ProviderError(
        `${call.provider} ${call.what} abandoned: the caller's deadline passed after ${attempt - 1} attempt(s)${last ? ` (last: ${last.message})` : ""}`,
        last?.status ?? null,
        true,
      );
    }
    let response: Response;
    try {
      const headers = {
        Accept: "application/json",
        ...(call.body === undefined ? {} : { "Content-Type": "application/json" }),
        ...call.headers,
      };
      response = await send(
        options,
        call.url,
        { method: call.method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) },
        call.signal,
      );
    } catch (err) {
      // A request that never got an answer may still have been carried out, unless it never left.
      const nothingSent = connectionRefused(err);
      last = new ProviderError(`${call.provider} unreachable (${call.what}): ${String(err)}`, null, true);
      if (!nothingSent) last = onceOnly(call.retry, last);
      if (!(call.retry === "reads" || (call.retry === "unacted" && nothingSent))) throw last;
      await backoff(options, attempt, attempts, null, call.signal);
      continue;
    }
    const raw = await response.text();
    const json = tryJson(raw);
    if (response.ok) {
      if (json === undefined && call.emptyIsOk && raw.trim() === "") return { status: response.status, json: null };
      if (json === undefined)
        throw onceOnly(call.retry, new ProviderError(`${call.provider} answered ${call.what} with something that is not JSON`, 502, true));
      return { status: response.status, json };
    }
    if (response.status === 404 && attempt > 1 && call.goneOnRetryIsDone) return { status: 404, json: null };
    last = failure(
      call,
      response.status,
      json === undefined ? raw.trim().slice(0, 300) || "(empty body)" : (call.errorText?.(json) ?? raw.slice(0, 300)),
    );
    const again = response.status === 429 ? call.retry !== "never" : call.retry === "reads" && RETRYABLE_STATUS.has(response.status);
    if (!again) throw last;
    await backoff(
      options,
      attempt,
      attempts,
      response.headers.get("retry-after"),
      call.signal,
      response.status === 429 ? call.rateIntervalMs : 0,
    );
  }
  throw last!;
}

/**
 * A failure of a create (`unacted`, `never`) after which the provider may have acted: not for
 * anyone to repeat. A 429 stays retryable: the rate limit answers before anything is done.
 */
export function onceOnly(retry: RetryPolicy, err: ProviderError): ProviderError {
  if (retry !== "unacted" && retry !== "never") return err;
  return err.retryable && err.status !== 429
    ? new ProviderError(`${err.message}; not retried: a create may have been carried out`, err.status)
    : err;
}

/** fetch (undici) could not connect at all: nothing was sent. */
function connectionRefused(err: unknown): boolean {
  return (err as { cause?: { code?: unknown } } | null)?.cause?.code === "ECONNREFUSED";
}

function failure(call: JsonCall, status: number, detail: string): ProviderError {
  const where = `${call.provider} ${call.what}`;
  if (status === 401 || status === 403)
    return new ProviderError(`${call.provider} rejected the API key (${status}) on ${call.what}: ${detail}`, status);
  if (status === 429) return new ProviderError(`${where}: rate limited (429), try again later: ${detail}`, 429, true);
  // Only a read is safe to repeat after a 5xx: an action's may mean it was carried out.
  if (RETRYABLE_STATUS.has(status) && call.retry === "reads")
    return new ProviderError(`${where} failed (${status}): ${detail}`, status, true);
  if (status >= 500) return new ProviderError(`${where} failed (${status}), not retried (it may have been carried out): ${detail}`, status);
  return new ProviderError(`${where} answered ${status}: ${detail}`, status);
}

async function backoff(
  options: HttpOptions,
  attempt: number,
  attempts: number,
  retryAfter: string | null,
  signal?: AbortSignal,
  atLeastMs = 0,
): Promise<void> {
  if (attempt >= attempts || signal?.aborted) return;
  const base = Math.max((options.backoffMs ?? 1000) * 2 ** (attempt - 1), atLeastMs ?? 0);
  const told = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : 0;
  const sleeping = pause(options, Math.min(Math.max(base, told), MAX_RETRY_AFTER_MS));
  await (signal
    ? Promise.race([sleeping, new Promise<void>((done) => signal.addEventListener("abort", () => done(), { once: true }))])
    : sleeping);
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
