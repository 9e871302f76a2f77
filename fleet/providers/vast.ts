/**
 * The Vast.ai provider: the REST API over fetch (Web APIs only, so it runs in Workers too), with
 * the request shapes vast-cli uses (vast-ai/vast-cli 55679830, vastai/api/instances.py and
 * vastai/api/client.py `_build_url`): listing pages through `GET /api/v1/instances/` with
 * `select_filters={}`, `order_by=[{"col":"id","dir":"asc"}]` and `limit=25`, each query value
 * JSON-encoded unless it is a string, and sends each answer's `next_token` back as
 * `after_token`; show adds `owner=me`; mutating calls always carry a JSON body (`{}` on DELETE).
 *
 * Retried, with backoff (honouring Retry-After) until the caller's deadline signal aborts (a run's
 * provider call never outlives its lease), is exactly what vast-cli retries, for every method:
 * 429, 502, 503 and 504 and network failures (vastai/api/client.py `_RETRYABLE_STATUS = {429, 502,
 * 503, 504}`, `_RETRYABLE_EXC`, `VastClient._request`). A 500 is not retried: for an action it may
 * mean the action was carried out, so a reboot acknowledged with a 500 is sent once. Every other
 * failure, and any answer that does not parse, is a ProviderError. Create (renting an offer) is
 * stricter than vast-cli, which retries it like anything else: a second rental is a second bill,
 * so it is repeated only on a refused connection or a 429 (`notIdempotent`), and every other
 * failure of it is a ProviderError that is not retryable. Offers and create: fleet/providers/vast-offers.ts.
 *
 * The list is all pages or an error, never "the fleet is empty": a last page that leaves the list
 * short of its own `total_instances` (a 200 with `instances: []` and `total_instances: 60`, or
 * fewer rows than the total and no further page) is an error, because reconciliation would mark
 * every missing instance gone. Instances Vast lists as destroyed or unloaded are left out, as gone
 * (fleet/providers/vast-instance.ts `isGoneInstance`).
 */
import type { z } from "zod";
import { ProviderError, tailOfLog, type Capability, type CreatedInstance, type InstanceSpec, type Offer, type OfferQuery, type FleetInstance, type FleetProvider, type InstanceLogs, type LogRequest, type ProviderCall } from "./provider.ts";
import { isGoneInstance, toFleetInstance, vastActionAnswer, vastInstancePage, vastInstanceShow, vastLogsAnswer } from "./vast-instance.ts";
import { fetchLogResult } from "./vast-logs.ts";
import { vastQuery } from "./vast-query.ts";
import { createBody, createdInstance, matchingOffers, offersSearchBody, vastCreateAnswer, vastOffersAnswer } from "./vast-offers.ts";

export interface VastOptions {
  apiKey: string;
  /** https://console.vast.ai unless VAST_URL says otherwise. */
  baseUrl: string;
  fetch?: typeof fetch;
  /** How backoff waits; tests pass one that does not. */
  sleep?: (ms: number) => Promise<void>;
  /** Attempts per call, counting the first (default 4). */
  maxAttempts?: number;
  /** First backoff delay, doubled on each retry (default 500 ms). */
  backoffMs?: number;
  timeoutMs?: number;
  /** Instances per list page (vast-cli always asks for 25). */
  pageSize?: number;
  /** Polls of a log's result_url before giving up (vast-cli: 30, 300 ms apart). */
  logPolls?: number;
  logPollDelayMs?: number;
}

/** Sent on every call, so Vast can tell fleetwarden's traffic from vast-cli's (`vastai-sdk/…`). */
export const VAST_USER_AGENT = "fleetwarden/0.1 (+vast provider)";
/** Every list page is ordered by id, as vast-cli asks, so `after_token` paging is stable. */
const LIST_ORDER = [{ col: "id", dir: "asc" }];
const MAX_PAGES = 400;
const MAX_RETRY_AFTER_MS = 30_000;
/** What vast-cli retries (vastai/api/client.py `_RETRYABLE_STATUS`); anything else is answered once. */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

const wait = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

interface CallOptions {
  /** The call removes the resource, so a 404 after a lost answer means it was done. */
  goneOnRetryIsDone?: boolean;
  /** The caller's deadline: no attempt starts, and no backoff waits, once it has aborted. */
  signal?: AbortSignal | undefined;
  /**
   * The call is not idempotent (create): repeated only when Vast.ai cannot have acted on it — the
   * connection was refused before anything was sent, or a 429 (the rate limit answers first).
   * A timeout, a reset, a 5xx or a gateway error may follow a rental: answered once.
   */
  notIdempotent?: boolean;
}

export { vastQuery };

export class VastProvider implements FleetProvider {
  readonly kind = "vast" as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(["start", "stop", "reboot", "destroy", "label", "logs", "create", "telemetry"]);
  private readonly base: string;

  constructor(private readonly options: VastOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
  }

  async list(): Promise<FleetInstance[]> {
    const found: FleetInstance[] = [];
    const seenTokens = new Set<string>();
    let token: string | null = null;
    let rows = 0;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query = vastQuery({
        select_filters: {},
        order_by: LIST_ORDER,
        limit: this.options.pageSize ?? 25,
        ...(token ? { after_token: token } : {}),
      });
      const body = await this.call("GET", `/api/v1/instances/?${query}`);
      const parsed = parse(vastInstancePage, body, "instance list");
      rows += parsed.instances.length;
      found.push(...parsed.instances.filter((raw) => !isGoneInstance(raw)).map(toFleetInstance));
      token = parsed.next_token || null;
      // More rows than the total is an instance created while paging; fewer would lose instances.
      const total = parsed.total_instances;
      if (!token && total != null && rows < total) {
        throw new ProviderError(`Vast.ai instance list contradicts itself: its last page (${page + 1}) ends after ${rows} instance(s), but total_instances says ${total}`, 502, true);
      }
      if (!token) return found;
      if (seenTokens.has(token)) throw new ProviderError("Vast.ai instance list repeated a page token", null, true);
      seenTokens.add(token);
    }
    throw new ProviderError(`Vast.ai instance list did not end after ${MAX_PAGES} pages`, null, true);
  }

  async get(id: string): Promise<FleetInstance | null> {
    if (!isVastId(id)) return null;
    try {
      const body = await this.call("GET", `/api/v0/instances/${id}/?${vastQuery({ owner: "me" })}`);
      const shown = parse(vastInstanceShow, body, `instance ${id}`).instances;
      return shown && !isGoneInstance(shown) ? toFleetInstance(shown) : null;
    } catch (err) {
      if (err instanceof ProviderError && err.status === 404) return null;
      throw err;
    }
  }

  async start(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/${requireId(id)}/`, { state: "running" }, { signal: call.signal });
  }

  async stop(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/${requireId(id)}/`, { state: "stopped" }, { signal: call.signal });
  }

  async reboot(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/reboot/${requireId(id)}/`, {}, { signal: call.signal });
  }

  /**
   * A 404 on a retry means an earlier attempt, whose answer was lost to a 5xx or the network,
   * already destroyed the instance: that is success, not an error.
   */
  async destroy(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("DELETE", `/api/v0/instances/${requireId(id)}/`, {}, { goneOnRetryIsDone: true, signal: call.signal });
  }

  async setLabel(id: string, label: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/${requireId(id)}/`, { label }, { signal: call.signal });
  }

  /** vast-cli `logs`: ask for the log, then poll the result_url it answers with. */
  async logs(id: string, request: LogRequest): Promise<InstanceLogs> {
    const path = `/api/v0/instances/request_logs/${requireId(id)}/`;
    const answer = parse(vastLogsAnswer, await this.call("PUT", path, { tail: String(request.tailLines) }), `log request for instance ${id}`);
    if (answer.success === false || !answer.result_url) {
      throw new ProviderError(`Vast.ai gave no log for instance ${id}: ${answer.msg ?? answer.error ?? "no result_url"}`, 502);
    }
    const text = await fetchLogResult(id, answer.result_url, {
      fetch: this.options.fetch ?? fetch,
      sleep: this.options.sleep ?? wait,
      userAgent: VAST_USER_AGENT,
      attempts: this.options.logPolls ?? 30,
      delayMs: this.options.logPollDelayMs ?? 300,
      timeoutMs: this.options.timeoutMs ?? 30_000,
    });
    return tailOfLog(text, request.maxChars);
  }

  private async act(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<void> {
    const answer = parse(vastActionAnswer, await this.call(method, path, body, options), `${method} ${path}`);
    if (answer.success === false) {
      throw new ProviderError(`Vast.ai refused ${method} ${path}: ${answer.msg ?? answer.error ?? "no reason given"}`, 400);
    }
  }

  /** One API call with retries; returns the parsed JSON body of a 2xx answer. */
  private async call(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<unknown> {
    const attempts = Math.max(1, this.options.maxAttempts ?? 4);
    let last: ProviderError | null = null;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (options.signal?.aborted) {
        throw new ProviderError(`Vast.ai ${method} ${path} abandoned: the caller's deadline passed after ${attempt - 1} attempt(s)${last ? ` (last: ${last.message})` : ""}`, last?.status ?? null, true);
      }
      let response: Response;
      try {
        response = await (this.options.fetch ?? fetch)(`${this.base}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${this.options.apiKey}`,
            "User-Agent": VAST_USER_AGENT,
            Accept: "application/json",
            ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: withDeadline(AbortSignal.timeout(this.options.timeoutMs ?? 30_000), options.signal),
        });
      } catch (err) {
        const refused = connectionRefused(err);
        last = new ProviderError(`Vast.ai unreachable (${method} ${path}): ${String(err)}`, null, !options.notIdempotent || refused);
        if (!last.retryable) throw new ProviderError(`${last.message}; not retried: the request may have reached Vast.ai`, null);
        await this.backoff(attempt, attempts, null, options.signal);
        continue;
      }
      const raw = await response.text();
      if (response.ok) return parseJson(raw, `${method} ${path}`);
      if (response.status === 404 && attempt > 1 && options.goneOnRetryIsDone) return { success: true };
      last = failure(response.status, method, path, raw);
      if (!last.retryable || (options.notIdempotent && response.status !== 429)) throw options.notIdempotent ? onceOnly(last) : last;
      await this.backoff(attempt, attempts, response.headers.get("retry-after"), options.signal);
    }
    throw last!;
  }

  private async backoff(attempt: number, attempts: number, retryAfter: string | null, signal?: AbortSignal): Promise<void> {
    if (attempt >= attempts || signal?.aborted) return;
    const base = (this.options.backoffMs ?? 500) * 2 ** (attempt - 1);
    const told = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : 0;
    const sleeping = (this.options.sleep ?? wait)(Math.min(Math.max(base, told), MAX_RETRY_AFTER_MS));
    await (signal ? Promise.race([sleeping, aborted(signal)]) : sleeping);
  }

  /** vast-cli `search offers` (fleet/providers/vast-offers.ts): a read, retried as every read is. */
  async offers(query: OfferQuery, call: ProviderCall = {}): Promise<Offer[]> {
    const body = await this.call("POST", "/api/v0/bundles/", offersSearchBody(query), { signal: call.signal });
    return matchingOffers(parse(vastOffersAnswer, body, "offer search").offers, query);
  }

  /** vast-cli `create instance`: sent once unless Vast.ai cannot have acted (`notIdempotent`). */
  async create(offer: Offer, spec: InstanceSpec, call: ProviderCall = {}): Promise<CreatedInstance> {
    if (!isVastId(offer.id)) throw new ProviderError(`no such Vast.ai offer: ${offer.id} (ids are numeric)`, 404);
    const path = `/api/v0/asks/${offer.id}/`;
    const request = createBody(offer, spec);
    try {
      const body = await this.call("PUT", path, request, { signal: call.signal, notIdempotent: true });
      return createdInstance(parse(vastCreateAnswer, body, `answer to PUT ${path}`), offer.id);
    } catch (err) {
      // Whatever failed after the request may have reached Vast.ai (a 2xx that does not parse
      // included) is not for a caller to repeat either.
      throw err instanceof ProviderError ? onceOnly(err) : err;
    }
  }
}

/** fetch (undici) failed to connect at all: nothing was sent. */
function connectionRefused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return cause?.code === "ECONNREFUSED";
}

/** A failure of a call that is never repeated: not retryable, except a 429 (nothing was done). */
function onceOnly(err: ProviderError): ProviderError {
  return err.retryable && err.status !== 429 ? new ProviderError(`${err.message}; not retried: a create may have been carried out`, err.status) : err;
}

function withDeadline(timeout: AbortSignal, deadline: AbortSignal | undefined): AbortSignal {
  return deadline ? AbortSignal.any([timeout, deadline]) : timeout;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((done) => signal.addEventListener("abort", () => done(), { once: true }));
}

function isVastId(id: string): boolean {
  return /^\d{1,18}$/.test(id);
}

function requireId(id: string): string {
  if (!isVastId(id)) throw new ProviderError(`no such Vast.ai instance: ${id} (ids are numeric)`, 404);
  return id;
}

function failure(status: number, method: string, path: string, raw: string): ProviderError {
  const detail = describeBody(raw);
  const what = `${method} ${path}`;
  if (status === 401 || status === 403) return new ProviderError(`Vast.ai rejected the API key (${status}) on ${what}: ${detail}`, status);
  if (status === 404) return new ProviderError(`Vast.ai has no such resource (404) on ${what}: ${detail}`, 404);
  if (status === 410) return new ProviderError(`Vast.ai endpoint is gone (410) on ${what}: ${detail}`, 410);
  if (status === 429) return new ProviderError(`Vast.ai rate limit (429) on ${what}: ${detail}`, 429, true);
  if (RETRYABLE_STATUS.has(status)) return new ProviderError(`Vast.ai failed (${status}) on ${what}: ${detail}`, status, true);
  if (status >= 500) return new ProviderError(`Vast.ai failed (${status}) on ${what}, not retried (it may have been carried out): ${detail}`, status);
  return new ProviderError(`Vast.ai answered ${status} on ${what}: ${detail}`, status);
}

function describeBody(raw: string): string {
  try {
    const json = JSON.parse(raw) as Record<string, unknown>;
    const said = json.msg ?? json.error ?? json.detail;
    if (typeof said === "string" && said) return said.slice(0, 300);
  } catch {
    // not JSON: fall through to the text itself
  }
  return raw.trim().slice(0, 300) || "(empty body)";
}

function parseJson(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new ProviderError(`Vast.ai answered ${what} with something that is not JSON`, 502, true);
  }
}

function parse<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ProviderError(`Vast.ai sent a malformed ${what}: ${issue.path.join(".") || "body"}: ${issue.message}`, 502, true);
  }
  return parsed.data;
}
