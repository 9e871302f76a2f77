/**
 * A strict local Vast.ai stand-in for contract tests: a real node:http server on port 0 holding a
 * fleet of instance rows, answering the calls vast-cli makes, in the shapes vast-cli sends them.
 *
 * Written from vast-ai/vast-cli at commit 55679830a2c2adcf5c7fad08bf08717a9591062a, not from
 * fleetwarden's client:
 * - vastai/api/client.py `_build_url` / `_build_headers` (and vast.py `apiurl`, `http_request`):
 *   paths without `/api/vN/` get `/api/v0`; query values are strings as-is or `json.dumps`, then
 *   `quote_plus`; every call carries `Authorization: Bearer <key>`; PUT/POST/DELETE always send a
 *   JSON body (`json_data if json_data is not None else {}`).
 * - vastai/api/instances.py `show_instances` and vast.py `_fetch_all_instances_v1` (also
 *   vastai/async_/client.py `show_instances`): `GET /api/v1/instances/` always with
 *   `select_filters={}`, `order_by=[{"col": "id", "dir": "asc"}]`, `limit=25`, and from the
 *   second page on `after_token=<previous next_token>`; answer `{instances, next_token,
 *   total_instances, label_counts}`; paging stops when `next_token` is empty.
 * - `show_instance`: `GET /api/v0/instances/{id}/?owner=me`, answer `{instances: row | null}`.
 * - `start_instance` / `stop_instance` / `label_instance`: `PUT /api/v0/instances/{id}/` with
 *   `{"state": "running"|"stopped"}` or `{"label": …}`; `reboot_instance`:
 *   `PUT /api/v0/instances/reboot/{id}/` with `{}`; `destroy_instance`:
 *   `DELETE /api/v0/instances/{id}/` with `{}`.
 * - `logs` / `_poll_result_url`: `PUT /api/v0/instances/request_logs/{id}/` with a subset of
 *   `{tail, filter, daemon_logs}` (strings), answer `{success, result_url, msg}`; the result URL
 *   is fetched with a plain GET until it answers 200. Here it is served under `/storage/` and, like
 *   a presigned S3 URL, refuses a request that also carries an Authorization header (S3 answers
 *   400 InvalidArgument "Only one auth mechanism allowed") and answers 404 NoSuchKey until the
 *   log is written.
 *
 * - `total_instances` counts the whole list, not the page (vast-cli tests/cli/test_instances_commands.py:
 *   two pages of one row each both say `total_instances: 2`), so a last page that leaves the list
 *   short of it contradicts itself; inject such a page with `intercept`.
 * - A destroyed instance is answered as vast-cli's tests answer one (tests/cli/test_machines_commands.py,
 *   tests/cli/test_self_test_support_bundle.py: `{"actual_status": "destroyed", "intended_status":
 *   "destroyed"}`) when `keepDestroyed` is set: DELETE leaves the row listed with those statuses.
 * - Pacing (vast-ai/docs c624622622496828c1ae58edec481bba1f5d675d api-reference/rate-limits-and-errors.mdx:
 *   "enforced as a minimum interval between requests for a given endpoint and identity", a 429 with
 *   the plain-text body "API requests too frequent: endpoint threshold=…" and no Retry-After; the
 *   interval is the endpoint's OpenAPI `x-rate-limit.threshold`: 1.0 s for `GET /api/v1/instances/`
 *   (openapi/yaml/show_instances.yaml), 4.5 s for `PUT /api/v0/asks/{id}/` (create_instance.yaml)).
 *   With `pacing` the fake is strict about it on its own clock: every request to those endpoints,
 *   refused ones included, starts the interval again; `tooFast` counts the 429s it answered.
 * - Retries (vastai/api/client.py `_RETRYABLE_STATUS = {429, 502, 503, 504}`, `VastClient._request`):
 *   vast-cli repeats a request answered with one of those, for every method, and nothing else; the
 *   fake counts every request (`requests`), so a test can tell a retried action from one sent once.
 * - Economics fields of an instance row (vastai/data/instance.py `Instance` at 55679830: gpu_util,
 *   disk_space, disk_usage, end_date, dph_total; is_bid and storage_total_cost from
 *   openapi/yaml/show_instances.yaml at a501c0047431e30553894b6b606db5805f5fda04, the parent of
 *   34f535d that moved the API docs out): gpu_util a percentage, disk_space and disk_usage in GB,
 *   end_date in seconds since the epoch, is_bid a boolean, dph_total including storage and
 *   storage_total_cost its storage part ($/h). A stop asked for by PUT sets intended_status to
 *   stopped; `outbidRow` is what a higher bid leaves: stopped while intended_status is running.
 *
 * - Offers and create (`POST /api/v0/bundles/`, `PUT /api/v0/asks/{id}/`): vast-market.ts, with
 *   its own sources in its header; seed offers with `offers: [vastOffer(…)]` or `addOffer`, read
 *   `offers` and `created`, and `boot(id)` a created instance from loading to running.
 *
 * Strict: an unknown query parameter, a missing one vast-cli always sends, a value that is not
 * what vast-cli encodes, a body vast-cli would not send, or a foreign page token is a 400; a
 * missing or wrong Bearer key is a 401; a known path with the wrong method is a 405; an unknown
 * instance is a 404 `{success:false, error:"no_such_instance"}`. Faults (429, 5xx, malformed
 * answers) are injected per request with `intercept`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { VastMarket, type VastOfferRow } from "./vast-market.ts";
import { isPlainObject, ok, refuse, type Reply } from "./vast-replies.ts";

export interface SeenRequest {
  method: string;
  path: string;
  /** The query string exactly as sent, without the `?`. */
  rawQuery: string;
  query: URLSearchParams;
  authorization: string | undefined;
  userAgent: string | undefined;
  contentType: string | undefined;
  /** The parsed JSON body; undefined when none was sent. */
  body: unknown;
}

export interface Answer {
  status?: number;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  raw?: string;
  headers?: Record<string, string>;
}

export type VastRow = Record<string, unknown> & { id: number };

export interface VastFakeOptions {
  /** The only key accepted (default "vast-test-key"). */
  apiKey?: string;
  instances?: VastRow[];
  /** Answers a request before the fake does when it returns an Answer (fault injection). */
  intercept?: (req: SeenRequest, index: number) => Answer | undefined;
  /** Polls of a log's result_url answered 404 before the log is there (default 1). */
  logPollsBeforeReady?: number;
  /** The container log of an instance (default: a few lines naming it). */
  logOf?: (row: VastRow) => string;
  /** DELETE keeps the row, listed as destroyed (see the header), instead of removing it. */
  keepDestroyed?: boolean;
  /** The market's offers (vast-market.ts `vastOffer`). */
  offers?: VastOfferRow[];
  /** The current user's `credit` in USD (vast-cli `show user`; default 100). */
  credit?: number;
  /**
   * Instances whose host has lost the GPU: a start is accepted (`success: true`) but the container
   * stays in `scheduling` (vast-cli's `start instance` epilog: an instance stuck in "scheduling"
   * after a start means the machine's resources are unavailable). The status text is this fake's.
   */
  gpuLost?: number[];
  /** Strict pacing (see the header) on this clock; the intervals default to the documented ones. */
  pacing?: { now: () => number; listMs?: number; createMs?: number };
}

export interface VastServer {
  url: string;
  requests: SeenRequest[];
  /** Requests answered 429 for coming sooner than their endpoint's interval (`pacing`). */
  readonly tooFast: number;
  /** The fake's fleet by id, as it is now. */
  instances: Map<number, VastRow>;
  /** The market by offer id, as it is now (rented ones marked `rented: true, rentable: false`). */
  offers: Map<number, VastOfferRow>;
  /** Ids of the instances created by `PUT /api/v0/asks/{id}/`, in order. */
  created: number[];
  addOffer(offer: VastOfferRow): void;
  /** A created instance's container comes up: `loading` becomes `running`. */
  boot(id: number): void;
  close(): Promise<void>;
}

/** What vast-cli sends and the real API answers with, by rule. */
const LIST_REQUIRED = ["select_filters", "order_by", "limit"] as const;
const LIST_ALLOWED = new Set<string>([...LIST_REQUIRED, "after_token", "select_cols"]);
const LOG_BODY_KEYS = new Set(["tail", "filter", "daemon_logs"]);

async function readBody(req: IncomingMessage): Promise<{ text: string; json: unknown; invalid: boolean }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return { text, json: undefined, invalid: false };
  try {
    return { text, json: JSON.parse(text), invalid: false };
  } catch {
    return { text, json: undefined, invalid: true };
  }
}

function parseJsonValue(raw: string | null): unknown {
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

class VastFake {
  readonly instances = new Map<number, VastRow>();
  private readonly tokens = new Map<string, number>();
  private readonly logs = new Map<string, { text: string; polls: number }>();
  private counter = 0;
  readonly market: VastMarket;
  url = "";

  constructor(private readonly options: VastFakeOptions) {
    for (const row of options.instances ?? []) this.instances.set(row.id, { ...row });
    this.market = new VastMarket(this.instances, options.offers);
  }

  private get key() {
    return this.options.apiKey ?? "vast-test-key";
  }

  handle(req: SeenRequest, bodyInvalid: boolean): Reply {
    if (req.path.startsWith("/storage/")) return this.storage(req);
    if (req.authorization !== `Bearer ${this.key}`) return refuse(401, "auth_error", "Invalid user key");
    if (bodyInvalid) return refuse(400, "invalid_request", "the body is not JSON");
    if (req.method !== "GET" && req.contentType?.split(";")[0]?.trim() !== "application/json") {
      return refuse(400, "invalid_request", `${req.method} needs a JSON body (vast-cli always sends one)`);
    }
    let m: RegExpMatchArray | null;
    if (req.path === "/api/v1/instances/") return req.method === "GET" ? this.list(req) : this.methodNotAllowed(req);
    // The current user with its `credit`: vast-ai/vast-cli fea8ca1e vast.py `show__user` reads
    // `apiurl(args, "/users/current", …)` ("user balance, email, and ssh key"), and its `user_fields`
    // print `credit` ("Credit", dollars to two places).
    if (req.path === "/api/v0/users/current/")
      return req.method === "GET"
        ? (this.noQuery(req) ?? {
            status: 200,
            body: { id: 1, username: "ops", email: "ops@example.com", credit: this.options.credit ?? 100 },
          })
        : this.methodNotAllowed(req);
    if (req.path === "/api/v0/bundles/") return this.only(req, "POST") ?? this.market.search(req.body);
    if ((m = req.path.match(/^\/api\/v0\/asks\/(\d+)\/$/))) return this.only(req, "PUT") ?? this.market.rent(req.body, Number(m[1]));
    if ((m = req.path.match(/^\/api\/v0\/instances\/reboot\/(\d+)\/$/))) return this.only(req, "PUT") ?? this.reboot(req, Number(m[1]));
    if ((m = req.path.match(/^\/api\/v0\/instances\/request_logs\/(\d+)\/$/)))
      return this.only(req, "PUT") ?? this.requestLogs(req, Number(m[1]));
    if ((m = req.path.match(/^\/api\/v0\/instances\/(\d+)\/$/))) {
      const id = Number(m[1]);
      if (req.method === "GET") return this.show(req, id);
      if (req.method === "PUT") return this.noQuery(req) ?? this.update(req, id);
      if (req.method === "DELETE") return this.noQuery(req) ?? this.destroy(req, id);
      return this.methodNotAllowed(req);
    }
    return { status: 404, body: { detail: "Not found." } };
  }

  private methodNotAllowed(req: SeenRequest): Reply {
    return { status: 405, body: { detail: `Method "${req.method}" not allowed.` } };
  }

  private only(req: SeenRequest, method: string): Reply | undefined {
    if (req.method !== method) return this.methodNotAllowed(req);
    return this.noQuery(req);
  }

  private noQuery(req: SeenRequest): Reply | undefined {
    const names = [...req.query.keys()];
    return names.length ? refuse(400, "invalid_args", `unexpected query parameter(s): ${names.join(", ")}`) : undefined;
  }

  private list(req: SeenRequest): Reply {
    for (const name of req.query.keys())
      if (!LIST_ALLOWED.has(name)) return refuse(400, "invalid_args", `unknown query parameter: ${name}`);
    for (const name of LIST_REQUIRED) if (!req.query.has(name)) return refuse(400, "invalid_args", `missing query parameter: ${name}`);
    const filters = parseJsonValue(req.query.get("select_filters"));
    if (!isPlainObject(filters)) return refuse(400, "invalid_args", "select_filters must be a JSON object");
    if (Object.keys(filters).length) return refuse(400, "invalid_args", "this fake implements no select_filters");
    const order = parseJsonValue(req.query.get("order_by"));
    const validOrder =
      Array.isArray(order) &&
      order.length > 0 &&
      order.every((o) => isPlainObject(o) && typeof o.col === "string" && (o.dir === "asc" || o.dir === "desc"));
    if (!validOrder) return refuse(400, "invalid_args", 'order_by must be a JSON list of {"col", "dir": "asc"|"desc"}');
    const limit = parseJsonValue(req.query.get("limit"));
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 25)
      return refuse(400, "invalid_args", "limit must be an integer from 1 to 25");
    const descending = (order as { dir: string }[])[0]!.dir === "desc";
    const ids = [...this.instances.keys()].sort((a, b) => (descending ? b - a : a - b));
    let start = 0;
    const token = req.query.get("after_token");
    if (token !== null) {
      const after = this.tokens.get(token);
      if (after === undefined) return refuse(400, "invalid_args", "after_token is not a token this server issued");
      start = ids.findIndex((id) => (descending ? id < after : id > after));
      if (start < 0) start = ids.length;
    }
    const page = ids.slice(start, start + limit);
    let next: string | null = null;
    if (start + limit < ids.length) {
      next = `tok_${Buffer.from(`${page.at(-1)}:${++this.counter}`).toString("base64url")}`;
      this.tokens.set(next, page.at(-1)!);
    }
    return ok({ instances: page.map((id) => this.instances.get(id)), next_token: next, total_instances: ids.length, label_counts: {} });
  }

  private show(req: SeenRequest, id: number): Reply {
    const extra = [...req.query.keys()].filter((k) => k !== "owner");
    if (extra.length) return refuse(400, "invalid_args", `unexpected query parameter(s): ${extra.join(", ")}`);
    if (req.query.get("owner") !== "me") return refuse(400, "invalid_args", "owner=me is required");
    return ok({ instances: this.instances.get(id) ?? null });
  }

  private find(id: number): VastRow | Reply {
    return this.instances.get(id) ?? refuse(404, "no_such_instance", `Instance ${id} not found.`);
  }

  private update(req: SeenRequest, id: number): Reply {
    const instance = this.find(id);
    if (!("id" in instance)) return instance;
    const body = req.body;
    if (!isPlainObject(body)) return refuse(400, "invalid_args", "body must be a JSON object");
    const keys = Object.keys(body).sort().join(",");
    if (keys === "state" && body.state === "running" && this.options.gpuLost?.includes(id)) {
      Object.assign(instance, { intended_status: "running", actual_status: "scheduling", status_msg: "waiting for the host's GPUs" });
      return ok({ success: true });
    }
    if (keys === "state" && (body.state === "running" || body.state === "stopped")) {
      Object.assign(instance, {
        intended_status: body.state,
        cur_state: body.state,
        actual_status: body.state,
        status_msg: body.state === "running" ? "starting" : "stopped",
      });
      return ok({ success: true });
    }
    if (keys === "label" && typeof body.label === "string") {
      instance.label = body.label;
      return ok({ success: true });
    }
    return refuse(400, "invalid_args", `unsupported update body: ${JSON.stringify(body)}`);
  }

  private reboot(req: SeenRequest, id: number): Reply {
    const row = this.find(id);
    if (!("id" in row)) return row;
    if (!isPlainObject(req.body) || Object.keys(req.body).length) return refuse(400, "invalid_args", "reboot takes the body {}");
    Object.assign(row, { actual_status: "running", status_msg: "rebooted" });
    return ok({ success: true });
  }

  private destroy(req: SeenRequest, id: number): Reply {
    if (!isPlainObject(req.body) || Object.keys(req.body).length) return refuse(400, "invalid_args", "destroy takes the body {}");
    const row = this.find(id);
    if (!("id" in row)) return row;
    if (this.options.keepDestroyed) Object.assign(row, { actual_status: "destroyed", intended_status: "destroyed" });
    else this.instances.delete(id);
    return ok({ success: true });
  }

  private requestLogs(req: SeenRequest, id: number): Reply {
    const row = this.find(id);
    if (!("id" in row)) return row;
    const body = req.body;
    if (!isPlainObject(body)) return refuse(400, "invalid_args", "body must be a JSON object");
    for (const [name, value] of Object.entries(body)) {
      if (!LOG_BODY_KEYS.has(name) || typeof value !== "string")
        return refuse(400, "invalid_args", `unexpected log request field: ${name}`);
    }
    if (body.tail !== undefined && !/^\d+$/.test(body.tail as string)) return refuse(400, "invalid_args", "tail must be a number of lines");
    const lines = (this.options.logOf ?? ((r: VastRow) => `container for instance ${r.id} started\n${String(r.status_msg ?? "")}`))(
      row,
    ).split("\n");
    const tail = body.tail === undefined ? lines : lines.slice(-Number(body.tail));
    const key = `logs-${id}-${++this.counter}.txt`;
    this.logs.set(key, { text: tail.join("\n"), polls: 0 });
    return ok({ success: true, result_url: `${this.url}/storage/${key}?X-Amz-Signature=fake`, msg: "Logs requested" });
  }

  private storage(req: SeenRequest): Reply {
    if (req.method !== "GET") return this.methodNotAllowed(req);
    if (req.authorization !== undefined) {
      return {
        status: 400,
        body: null,
        raw: "<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>",
      };
    }
    const log = this.logs.get(req.path.slice("/storage/".length));
    if (!log || log.polls++ < (this.options.logPollsBeforeReady ?? 1)) {
      return { status: 404, body: null, raw: "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>" };
    }
    return { status: 200, body: null, raw: log.text };
  }
}

export async function startVastServer(options: VastFakeOptions = {}): Promise<VastServer> {
  const fake = new VastFake(options);
  const requests: SeenRequest[] = [];
  let tooFast = 0;
  const lastAt = new Map<string, number>();
  /** Vast's 429 body when `seen` comes sooner than its endpoint's interval after the previous one. */
  const pacingRefusal = (seen: SeenRequest): string | null => {
    if (!options.pacing) return null;
    const endpoint =
      seen.method === "GET" && seen.path === "/api/v1/instances/"
        ? { key: "list", ms: options.pacing.listMs ?? 1_000 }
        : seen.method === "PUT" && /^\/api\/v0\/asks\/\d+\/$/.test(seen.path)
          ? { key: "create", ms: options.pacing.createMs ?? 4_500 }
          : null;
    if (!endpoint) return null;
    const now = options.pacing.now();
    const last = lastAt.get(endpoint.key);
    lastAt.set(endpoint.key, now);
    return last !== undefined && now - last < endpoint.ms ? `API requests too frequent: endpoint threshold=${endpoint.ms / 1000}` : null;
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const body = await readBody(req);
    const seen: SeenRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      rawQuery: url.search.replace(/^\?/, ""),
      query: url.searchParams,
      authorization: req.headers.authorization,
      userAgent: req.headers["user-agent"],
      contentType: req.headers["content-type"],
      body: body.json,
    };
    requests.push(seen);
    const paced = pacingRefusal(seen);
    if (paced) {
      tooFast++;
      res.writeHead(429, { "Content-Type": "text/plain" });
      res.end(paced);
      return;
    }
    const injected = options.intercept?.(seen, requests.length - 1);
    if (injected) {
      res.writeHead(injected.status ?? 200, { "Content-Type": "application/json", ...injected.headers });
      res.end(injected.raw ?? JSON.stringify(injected.body ?? { success: true }));
      return;
    }
    const reply = fake.handle(seen, body.invalid);
    res.writeHead(reply.status, { "Content-Type": reply.raw === undefined ? "application/json" : "application/xml" });
    res.end(reply.raw ?? JSON.stringify(reply.body));
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  return {
    url: fake.url,
    requests,
    get tooFast() {
      return tooFast;
    },
    instances: fake.instances,
    offers: fake.market.offers,
    created: fake.market.created,
    addOffer: (offer) => fake.market.addOffer(offer),
    boot: (id) => fake.market.boot(id),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A Vast instance row as the API sends it (the fields fleetwarden reads, plus some it ignores). */
export function vastInstance(id: number, overrides: Record<string, unknown> = {}): VastRow {
  return {
    id,
    actual_status: "running",
    intended_status: "running",
    cur_state: "running",
    next_state: "running",
    label: `job-${id}`,
    status_msg: "success, running pytorch/pytorch",
    gpu_name: "RTX 4090",
    num_gpus: 2,
    dph_total: 0.734,
    start_date: 1767225600.5,
    gpu_util: 87.5,
    disk_space: 100,
    disk_usage: 42,
    storage_total_cost: 0.0139,
    end_date: 1769904000,
    is_bid: false,
    machine_id: 12,
    ssh_host: "ssh1.vast.ai",
    extra_env: [],
    ...overrides,
  };
}

/** An interruptible instance a higher bid stopped: the container stopped, the owner's intent still running. */
export function outbidRow(id: number, overrides: Record<string, unknown> = {}): VastRow {
  return vastInstance(id, {
    is_bid: true,
    actual_status: "stopped",
    cur_state: "stopped",
    intended_status: "running",
    gpu_util: null,
    status_msg: "stopped",
    ...overrides,
  });
}

export { vastOffer, type VastOfferRow } from "./vast-market.ts";
