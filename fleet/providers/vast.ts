/**
 * The Vast.ai provider: the REST API over fetch (Web APIs only, so it runs in Workers too), with
 * the request shapes vast-cli uses (vast-ai/vast-cli 55679830, vastai/api/instances.py and
 * vastai/api/client.py `_build_url`): listing pages through `GET /api/v1/instances/` with
 * `select_filters={}`, `order_by=[{"col":"id","dir":"asc"}]` and `limit=25`, each query value
 * JSON-encoded unless it is a string, and sends each answer's `next_token` back as
 * `after_token`; show adds `owner=me`; mutating calls always carry a JSON body (`{}` on DELETE).
 *
 * Calls go through the providers' one HTTP client (fleet/providers/provider-http.ts). Every call but
 * create is a `reads` call, retried (bounded, with backoff honouring Retry-After, until the
 * caller's deadline signal aborts: a run's provider call never outlives its lease) on exactly what
 * vast-cli retries, for every method: 429, 502, 503 and 504 and network failures
 * (vastai/api/client.py `_RETRYABLE_STATUS = {429, 502, 503, 504}`, `_RETRYABLE_EXC`,
 * `VastClient._request`). A 500 is not retried: for an action it may mean the action was carried
 * out, so a reboot acknowledged with a 500 is sent once. A destroy answered 404 on a retry was done
 * by the attempt whose answer was lost. Create (renting an offer) is stricter than vast-cli, which
 * retries it like anything else: a second rental is a second bill, so it is `unacted`, repeated
 * only on a refused connection or a 429, and every other failure of it is a ProviderError that is
 * not retryable. Offers and create: fleet/providers/vast-offers.ts.
 *
 * Paced as Vast.ai documents its rate limit, a minimum interval between requests per endpoint and
 * identity (vast-ai/docs c624622622496828c1ae58edec481bba1f5d675d api-reference/rate-limits-and-errors.mdx;
 * the intervals are the OpenAPI `x-rate-limit.threshold`s): list pages at least
 * VAST_LIST_INTERVAL_MS apart (show_instances.yaml: 1.0 s), creates at least
 * VAST_CREATE_INTERVAL_MS apart, a create's retry after a 429 included (create_instance.yaml: 4.5 s),
 * so no page or retry earns a 429 by design. Vast sends no Retry-After, so a 429 on those endpoints
 * is repeated no sooner than their interval. Per provider object (one per account and host).
 *
 * The list is all pages or an error, never "the fleet is empty": a last page that leaves the list
 * short of its own `total_instances` (a 200 with `instances: []` and `total_instances: 60`, or
 * fewer rows than the total and no further page) is an error, because reconciliation would mark
 * every missing instance gone. Instances Vast lists as destroyed or unloaded are left out, as gone
 * (fleet/providers/vast-instance.ts `isGoneInstance`).
 */
import {
  ProviderError,
  tailOfLog,
  type Capability,
  type CreatedInstance,
  type InstanceSpec,
  type Offer,
  type OfferQuery,
  type FleetInstance,
  type FleetProvider,
  type InstanceLogs,
  type LogRequest,
  type ProviderCall,
} from "./provider.ts";
import { callJson, onceOnly, parseAnswer, pause, type HttpOptions, type JsonAnswer, type RetryPolicy } from "./provider-http.ts";
import { isGoneInstance, toFleetInstance, vastActionAnswer, vastInstancePage, vastInstanceShow, vastLogsAnswer } from "./vast-instance.ts";
import { fetchLogResult } from "./vast-logs.ts";
import { vastQuery } from "./vast-query.ts";
import { VAST_CURRENT_USER_PATH, vastCurrentUser } from "./account-balance.ts";
import { createBody, createdInstance, matchingOffers, offersSearchBody, vastCreateAnswer, vastOffersAnswer } from "./vast-offers.ts";

export interface VastOptions extends HttpOptions {
  apiKey: string;
  /** https://console.vast.ai unless VAST_URL says otherwise. */
  baseUrl: string;
  /** Instances per list page (vast-cli always asks for 25). */
  pageSize?: number;
  /** Polls of a log's result_url before giving up (vast-cli: 30, 300 ms apart). */
  logPolls?: number;
  logPollDelayMs?: number;
  /** The clock pacing reads (Date.now unless a test shares its own with the fake). */
  now?: () => number;
}

/** `GET /api/v1/instances/`: Vast.ai's minimum interval between requests (x-rate-limit threshold 1.0 s). */
export const VAST_LIST_INTERVAL_MS = 1_000;
/** `PUT /api/v0/asks/{id}/` (create): Vast.ai's minimum interval between requests (threshold 4.5 s). */
export const VAST_CREATE_INTERVAL_MS = 4_500;

/** Sent on every call, so Vast can tell fleetwarden's traffic from vast-cli's (`vastai-sdk/…`). */
export const VAST_USER_AGENT = "fleetwarden/0.1 (+vast provider)";
const NAME = "Vast.ai";
/** Every list page is ordered by id, as vast-cli asks, so `after_token` paging is stable. */
const LIST_ORDER = [{ col: "id", dir: "asc" }];
const MAX_PAGES = 400;

export { vastQuery };

export class VastProvider implements FleetProvider {
  readonly kind = "vast" as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>([
    "start",
    "stop",
    "reboot",
    "destroy",
    "label",
    "logs",
    "create",
    "telemetry",
  ]);
  private readonly base: string;
  /** Vast's defaults: 4 attempts, back-off from 500 ms. */
  private readonly http: HttpOptions;

  constructor(private readonly options: VastOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.http = { ...options, maxAttempts: options.maxAttempts ?? 4, backoffMs: options.backoffMs ?? 500 };
  }

  /** When each paced endpoint was last asked (pacing's only state). */
  private readonly lastAsked = new Map<"list" | "create", number>();

  /** Waits until `intervalMs` has passed since the endpoint was last asked, then marks it asked. */
  private async paced(endpoint: "list" | "create", intervalMs: number): Promise<void> {
    const now = this.options.now ?? Date.now;
    const last = this.lastAsked.get(endpoint);
    const wait = last === undefined ? 0 : last + intervalMs - now();
    if (wait > 0) await pause(this.http, wait);
    this.lastAsked.set(endpoint, now());
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
      await this.paced("list", VAST_LIST_INTERVAL_MS);
      const body = (await this.request("GET", `/api/v1/instances/?${query}`, undefined, "reads", undefined, false, VAST_LIST_INTERVAL_MS))
        .json;
      this.lastAsked.set("list", (this.options.now ?? Date.now)());
      const parsed = parseAnswer(NAME, vastInstancePage, body, "instance list");
      rows += parsed.instances.length;
      found.push(...parsed.instances.filter((raw) => !isGoneInstance(raw)).map(toFleetInstance));
      token = parsed.next_token || null;
      // More rows than the total is an instance created while paging; fewer would lose instances.
      const total = parsed.total_instances;
      if (!token && total != null && rows < total) {
        throw new ProviderError(
          `Vast.ai instance list contradicts itself: its last page (${page + 1}) ends after ${rows} instance(s), but total_instances says ${total}`,
          502,
          true,
        );
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
      const body = await this.call("GET", `/api/v0/instances/${id}/?${vastQuery({ owner: "me" })}`, undefined, "reads");
      const shown = parseAnswer(NAME, vastInstanceShow, body, `instance ${id}`).instances;
      return shown && !isGoneInstance(shown) ? toFleetInstance(shown) : null;
    } catch (err) {
      if (err instanceof ProviderError && err.status === 404) return null;
      throw err;
    }
  }

  async start(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/${requireId(id)}/`, { state: "running" }, call);
  }

  async stop(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/${requireId(id)}/`, { state: "stopped" }, call);
  }

  async reboot(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/reboot/${requireId(id)}/`, {}, call);
  }

  /**
   * A 404 on a retry means an earlier attempt, whose answer was lost to a 5xx or the network,
   * already destroyed the instance: that is success, not an error.
   */
  async destroy(id: string, call: ProviderCall = {}): Promise<void> {
    return this.act("DELETE", `/api/v0/instances/${requireId(id)}/`, {}, call, true);
  }

  async setLabel(id: string, label: string, call: ProviderCall = {}): Promise<void> {
    return this.act("PUT", `/api/v0/instances/${requireId(id)}/`, { label }, call);
  }

  /** vast-cli `logs`: ask for the log, then poll the result_url it answers with. */
  async logs(id: string, request: LogRequest): Promise<InstanceLogs> {
    const path = `/api/v0/instances/request_logs/${requireId(id)}/`;
    const answer = parseAnswer(
      NAME,
      vastLogsAnswer,
      await this.call("PUT", path, { tail: String(request.tailLines) }, "reads"),
      `log request for instance ${id}`,
    );
    if (answer.success === false || !answer.result_url) {
      throw new ProviderError(`Vast.ai gave no log for instance ${id}: ${answer.msg ?? answer.error ?? "no result_url"}`, 502);
    }
    const text = await fetchLogResult(id, answer.result_url, this.http, {
      userAgent: VAST_USER_AGENT,
      attempts: this.options.logPolls ?? 30,
      delayMs: this.options.logPollDelayMs ?? 300,
    });
    return tailOfLog(text, request.maxChars);
  }

  private async act(method: string, path: string, body: unknown, call: ProviderCall, removes = false): Promise<void> {
    const { status, json } = await this.request(method, path, body, "reads", call.signal, removes);
    if (status === 404) return; // removed by an earlier attempt whose answer was lost
    const acted = parseAnswer(NAME, vastActionAnswer, json, `${method} ${path}`);
    if (acted.success === false) {
      throw new ProviderError(`Vast.ai refused ${method} ${path}: ${acted.msg ?? acted.error ?? "no reason given"}`, 400);
    }
  }

  /** The JSON of a 2xx answer to one API call. */
  private async call(method: string, path: string, body: unknown, retry: RetryPolicy, signal?: AbortSignal): Promise<unknown> {
    return (await this.request(method, path, body, retry, signal)).json;
  }

  /** One API call through the providers' shared client (fleet/providers/provider-http.ts). */
  private request(
    method: string,
    path: string,
    body: unknown,
    retry: RetryPolicy,
    signal?: AbortSignal,
    removes = false,
    rateIntervalMs = 0,
  ): Promise<JsonAnswer> {
    return callJson(this.http, {
      provider: NAME,
      method,
      url: `${this.base}${path}`,
      what: `${method} ${path}`,
      headers: { Authorization: `Bearer ${this.options.apiKey}`, "User-Agent": VAST_USER_AGENT },
      body,
      retry,
      signal,
      errorText: vastErrorText,
      goneOnRetryIsDone: removes,
      rateIntervalMs,
    });
  }

  /** vast-cli `search offers` (fleet/providers/vast-offers.ts): a read, retried as every read is. */
  async offers(query: OfferQuery, call: ProviderCall = {}): Promise<Offer[]> {
    const body = await this.call("POST", "/api/v0/bundles/", offersSearchBody(query), "reads", call.signal);
    return matchingOffers(parseAnswer(NAME, vastOffersAnswer, body, "offer search").offers, query);
  }

  /** vast-cli `show user`: the account's `credit` in USD (fleet/providers/account-balance.ts). */
  async balance(call: ProviderCall = {}): Promise<number> {
    const body = await this.call("GET", VAST_CURRENT_USER_PATH, undefined, "reads", call.signal);
    return parseAnswer(NAME, vastCurrentUser, body, "current user").credit;
  }

  /** vast-cli `create instance`: sent once unless Vast.ai cannot have acted (`unacted`). */
  async create(offer: Offer, spec: InstanceSpec, call: ProviderCall = {}): Promise<CreatedInstance> {
    if (!isVastId(offer.id)) throw new ProviderError(`no such Vast.ai offer: ${offer.id} (ids are numeric)`, 404);
    const path = `/api/v0/asks/${offer.id}/`;
    const request = createBody(offer, spec);
    try {
      await this.paced("create", VAST_CREATE_INTERVAL_MS);
      let body: unknown;
      try {
        body = (await this.request("PUT", path, request, "unacted", call.signal, false, VAST_CREATE_INTERVAL_MS)).json;
      } finally {
        this.lastAsked.set("create", (this.options.now ?? Date.now)());
      }
      return createdInstance(parseAnswer(NAME, vastCreateAnswer, body, `answer to PUT ${path}`), offer.id);
    } catch (err) {
      // Whatever failed after the request may have reached Vast.ai (a 2xx that does not parse
      // included) is not for a caller to repeat either.
      throw err instanceof ProviderError ? onceOnly("unacted", err) : err;
    }
  }
}

function isVastId(id: string): boolean {
  return /^\d{1,18}$/.test(id);
}

function requireId(id: string): string {
  if (!isVastId(id)) throw new ProviderError(`no such Vast.ai instance: ${id} (ids are numeric)`, 404);
  return id;
}

/** Vast's own words in a failed answer (`msg`, `error` or `detail`), if it gave any. */
function vastErrorText(json: unknown): string | null {
  const body = (json ?? {}) as { msg?: unknown; error?: unknown; detail?: unknown };
  const said = body.msg ?? body.error ?? body.detail;
  return typeof said === "string" && said ? said.slice(0, 300) : null;
}
