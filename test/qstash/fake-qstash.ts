/**
 * A local QStash for tests: a node:http server with QStash's publish API that really delivers.
 *
 * Written from Upstash's documentation (github.com/upstash/docs), not from our client:
 * - `qstash/api/publish.mdx` (commit 0e866ca26eb75635017e703a092ee6e048c048fd): `POST
 *   /v2/publish/{destination}` with a bearer token; `Upstash-Not-Before` is a unix timestamp in
 *   **seconds** and wins over `Upstash-Delay` (`10s`, `3m`, `10h`, `1d`, compound `1d10h30m` per
 *   `qstash/openapi.yaml`); the answer is
 *   `{messageId, url}`.
 * - `qstash/features/deduplication.mdx` (commit e0567bd31852da44ed5753531290c5062e23b400):
 *   `Upstash-Deduplication-Id`; a duplicate is accepted with 202 and the existing messageId, not
 *   enqueued; "The deduplication window is 10 minutes".
 * - `qstash/features/flowcontrol.mdx` (commit 21008c9320bea27d7414405a41f59d16133c6d95):
 *   `Upstash-Flow-Control-Key` with `Upstash-Flow-Control-Value` (`Parallelism=n`, `Rate=n`,
 *   comma-separated); parallelism is how many calls per key may be in flight at once.
 * - `qstash/features/retry.mdx` (commit 00e81fb9118882ed94e760c2f9071f8b618d64a5): a non-2xx answer
 *   is retried `Upstash-Retries` times (at most the plan's maximum) after `min(86400, e^(2.5n))`
 *   seconds; each attempt carries `Upstash-Retried: n`.
 * - `qstash/api/messages/batch.mdx` (commit e390154a97aeef795cd1a8d3a1b8e9357406947e) and
 *   `qstash/features/batch.mdx` (commit 22913405bd0f67b051ef3a25eba8934892116174): `POST /v2/batch`
 *   takes a JSON array of `{destination, headers, body}` whose headers are a publish's; the answer
 *   is an array with one `{messageId, url?, deduplicated?}` per message.
 * - `qstash/howto/signature.mdx`: each delivery carries `Upstash-Signature`, an HS256 JWT signed with
 *   the current signing key: iss "Upstash", sub = the destination URL, exp, nbf, iat, a fresh jti,
 *   and body = base64url(SHA-256(body)).
 * - `qstash/features/callbacks.mdx` (commit 780029f70c14f963eea4dee5f381e84a7ddec3ea): a callback
 *   "publish[es] a new message with the response to the callback URL" after every attempt, a
 *   failure callback once the retries are exhausted, each "charged as any other message"; the body
 *   is JSON with `status`, `header`, `body` (base64), `retried`, `maxRetries`, `sourceMessageId`,
 *   `url`, `method`, `sourceHeader`, `sourceBody`, `notBefore`, `createdAt` (and `dlqId` for a
 *   failure callback).
 * - The daily quota and the `:` refusal in deduplication ids: see daily-quota.ts and
 *   publish-headers.ts, which cite their sources.
 *
 * Strict: a missing or wrong token is a 401; a malformed `Upstash-*` header (non-integer or
 * millisecond Not-Before, bad Delay, Retries above the plan, a flow-control key without a value or
 * a value it cannot read, an unknown method, a callback URL without http(s), a `:` in a
 * deduplication id, an `Upstash-*` header QStash does not define) is a 400 naming the header, and
 * nothing is enqueued; past the daily quota a publish is a 429 with the daily limit headers.
 *
 * Delivery is driven by the test (`deliverDue`, `drain`) at the fake's clock (`now`, settable), so
 * Not-Before, the dedup window and retry back-off are exercised without waiting; signatures use
 * real time, because the receiver checks them against its own clock. `route` maps the published
 * destination (PUBLIC_URL…) to where the app listens on loopback.
 */
import { createHash, createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { callbackMessage } from "./callback-message.ts";
import { dailyQuota, type DailyQuota } from "./daily-quota.ts";
import { BadPublish, header, readPublish, type PublishSchedule } from "./publish-headers.ts";

export const TEST_QSTASH_TOKEN = "test-qstash-token";
export const TEST_CURRENT_KEY = "sig_test_current_4f1c2a9e7b";
export const TEST_NEXT_KEY = "sig_test_next_8d3e6b0c5a";
export const TEST_PUBLIC_URL = "https://fleetwarden.test";

/** Upstash's documented deduplication window. */
export const DEDUP_WINDOW_MS = 10 * 60_000;
/** The free plan's retry maximum (the fake's default `maxRetries`). */
export const PLAN_MAX_RETRIES = 3;

const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

export interface SignOptions {
  key?: string;
  url: string;
  body: string;
  /** seconds epoch used for iat/nbf; exp = now + ttl */
  now?: number;
  ttlSeconds?: number;
  jti?: string;
  issuer?: string;
}

/** Signs like QStash: HS256 JWT, iss Upstash, sub = destination url, body = base64url(sha256). */
export function signQStash(options: SignOptions): string {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const claims = b64url(
    JSON.stringify({
      iss: options.issuer ?? "Upstash",
      sub: options.url,
      exp: now + (options.ttlSeconds ?? 300),
      nbf: now,
      iat: now,
      jti: options.jti ?? `jwt_${randomUUID()}`,
      body: createHash("sha256").update(options.body).digest("base64url"),
    }),
  );
  const signature = createHmac("sha256", options.key ?? TEST_CURRENT_KEY)
    .update(`${header}.${claims}`)
    .digest("base64url");
  return `${header}.${claims}.${signature}`;
}

export interface PublishedMessage extends PublishSchedule {
  messageId: string;
  destination: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** ms epoch: when it was enqueued. */
  createdAt: number;
  state: "pending" | "in-flight" | "delivered" | "failed";
  /** Attempts made so far (the next attempt's `Upstash-Retried`). */
  retried: number;
  nextAttemptAt: number;
  /** Status of each attempt (0 when the destination could not be reached). */
  attempts: number[];
}

export interface FakeQStashOptions {
  token?: string;
  /** The key deliveries are signed with (QStash's current signing key). */
  signingKey?: string;
  /** The fake's clock in ms (default real time); settable later as `fake.now`. */
  now?: () => number;
  /** Where a destination is really reached (default: itself). */
  route?: (destination: string) => string;
  /** Seconds before retry n (default QStash's `min(86400, e^(2.5n))`). */
  retryDelaySeconds?: (retried: number) => number;
  maxRetries?: number;
  /** Messages allowed per day (default: no limit; the free plan's is 1,000). */
  dailyLimit?: number;
}

export interface FakeQStash {
  baseUrl: string;
  /** Every accepted (enqueued) message, in order. */
  messages: PublishedMessage[];
  /** Every publish request received, refused and duplicates included. */
  requests: { destination: string; headers: IncomingHttpHeaders; body: string; status: number }[];
  /** Makes the next publishes answer this status (e.g. 500) until reset to null. */
  failWith: number | null;
  /** The daily message quota: set `quota.limit`, read `quota.usedToday`, `quota.reset()` a day. */
  quota: DailyQuota;
  now: () => number;
  route: (destination: string) => string;
  /** Most deliveries of one flow-control key seen in flight at once. */
  maxInFlight: Map<string, number>;
  /**
   * Delivers every message due at `now()` (respecting flow-control parallelism) and waits for
   * the answers; returns how many attempts were made.
   */
  deliverDue(): Promise<number>;
  /** deliverDue until nothing is due (deliveries publish follow-ups); bounded by `rounds`. */
  drain(rounds?: number): Promise<number>;
  /** Delivers the first due message alone (one invocation at a time, for measuring); null when none is due. */
  deliverNext(): Promise<PublishedMessage | null>;
  close(): Promise<void>;
}

export async function startFakeQStash(options: FakeQStashOptions = {}): Promise<FakeQStash> {
  const token = options.token ?? TEST_QSTASH_TOKEN;
  const maxRetries = options.maxRetries ?? PLAN_MAX_RETRIES;
  const retryDelay = options.retryDelaySeconds ?? ((n: number) => Math.min(86400, Math.exp(2.5 * n)));
  const dedup = new Map<string, { messageId: string; at: number }>();
  const inFlight = new Map<string, number>();

  const fake = {
    messages: [] as PublishedMessage[],
    requests: [] as FakeQStash["requests"],
    failWith: null as number | null,
    now: options.now ?? (() => Date.now()),
    route: options.route ?? ((destination: string) => destination),
    maxInFlight: new Map<string, number>(),
  };
  const quota = dailyQuota(() => fake.now(), options.dailyLimit);

  type Answer = { status: number; json: Record<string, unknown>; headers?: Record<string, string> };
  const refuse = (status: number, error: string): Answer => ({ status, json: { error } });
  /** The id a message would be deduplicated against, when QStash still remembers it. */
  const duplicateOf = (headers: IncomingHttpHeaders, now: number) => {
    const dedupId = header(headers, "upstash-deduplication-id");
    const seen = dedupId === undefined ? undefined : dedup.get(dedupId);
    return seen && now - seen.at < DEDUP_WINDOW_MS ? seen : undefined;
  };
  /** Adds a message to the queue and charges it (its first delivery attempt). */
  const push = (fields: Omit<PublishedMessage, "messageId" | "state" | "retried" | "nextAttemptAt" | "attempts">): PublishedMessage => {
    const message: PublishedMessage = {
      ...fields,
      messageId: `msg_${randomUUID()}`,
      state: "pending",
      retried: 0,
      nextAttemptAt: fields.notBefore,
      attempts: [],
    };
    fake.messages.push(message);
    quota.charge(1);
    return message;
  };

  /** Checks one message (from /v2/publish or one element of /v2/batch) and enqueues it unless deduplicated. */
  const checkMessage = (destination: string, headers: IncomingHttpHeaders, now: number): Answer | ReturnType<typeof readPublish> => {
    if (!/^https?:\/\/[^/]+/.test(destination)) return refuse(400, `destination must be a URL with http:// or https://: ${destination}`);
    try {
      return readPublish(headers, now, maxRetries);
    } catch (err) {
      if (err instanceof BadPublish) return refuse(400, err.message);
      throw err;
    }
  };
  const enqueue = (destination: string, headers: IncomingHttpHeaders, body: string, schedule: PublishSchedule, now: number): Answer => {
    const seen = duplicateOf(headers, now);
    if (seen) return { status: 202, json: { messageId: seen.messageId, url: destination, deduplicated: true } };
    const message = push({ destination, headers, body, ...schedule, createdAt: now });
    const dedupId = header(headers, "upstash-deduplication-id");
    if (dedupId !== undefined) dedup.set(dedupId, { messageId: message.messageId, at: now });
    return { status: 201, json: { messageId: message.messageId, url: destination } };
  };

  /**
   * POST /v2/batch: a JSON array of `{destination, headers, body}` whose headers are those of a
   * publish. A malformed batch (not an array, an element without a destination, a bad header) is
   * refused whole with a 400 naming the element, and nothing is enqueued.
   */
  const batch = (raw: string, now: number): Answer | { status: number; json: unknown[] } => {
    let items: unknown;
    try {
      items = JSON.parse(raw);
    } catch {
      return refuse(400, "batch body must be a JSON array of messages");
    }
    if (!Array.isArray(items) || items.length === 0) return refuse(400, "batch body must be a non-empty JSON array of messages");
    const checked: { destination: string; headers: IncomingHttpHeaders; body: string; schedule: ReturnType<typeof readPublish> }[] = [];
    for (const [i, item] of items.entries()) {
      const m = item as { destination?: unknown; headers?: unknown; body?: unknown };
      if (typeof m !== "object" || m === null || typeof m.destination !== "string")
        return refuse(400, `batch[${i}]: destination is required`);
      if (m.body !== undefined && typeof m.body !== "string") return refuse(400, `batch[${i}]: body must be a string`);
      if (m.headers !== undefined && (typeof m.headers !== "object" || m.headers === null))
        return refuse(400, `batch[${i}]: headers must be an object`);
      const headers: IncomingHttpHeaders = {};
      for (const [name, value] of Object.entries((m.headers ?? {}) as Record<string, unknown>)) headers[name.toLowerCase()] = String(value);
      const schedule = checkMessage(m.destination, headers, now);
      if ("status" in schedule) return refuse(schedule.status, `batch[${i}]: ${String(schedule.json.error)}`);
      checked.push({ destination: m.destination, headers, body: (m.body as string | undefined) ?? "", schedule });
    }
    const fresh = new Set(
      checked.filter((c) => !duplicateOf(c.headers, now)).map((c, i) => header(c.headers, "upstash-deduplication-id") ?? `#${i}`),
    );
    const overQuota = quota.refusal(fresh.size);
    if (overQuota) return overQuota;
    return { status: 200, json: checked.map((c) => enqueue(c.destination, c.headers, c.body, c.schedule, now).json) };
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const prefix = "/v2/publish/";
      const isBatch = req.url === "/v2/batch";
      const destination = req.url?.startsWith(prefix) ? decodeURIComponent(req.url.slice(prefix.length)) : isBatch ? "(batch)" : "";
      const reply = ({ status, json, headers }: { status: number; json: unknown; headers?: Record<string, string> }) => {
        fake.requests.push({ destination, headers: req.headers, body, status });
        res.writeHead(status, { "Content-Type": "application/json", ...headers });
        res.end(JSON.stringify(json));
      };
      if (req.method !== "POST" || (!isBatch && !req.url?.startsWith(prefix))) return reply(refuse(404, "not found"));
      if (!req.headers.authorization) return reply(refuse(401, "Authorization header is missing"));
      if (req.headers.authorization !== `Bearer ${token}`) return reply(refuse(401, "invalid token"));
      if (fake.failWith) return reply(refuse(fake.failWith, "injected failure"));
      const now = fake.now();
      if (isBatch) return reply(batch(body, now));
      const schedule = checkMessage(destination, req.headers, now);
      if ("status" in schedule) return reply(schedule);
      const overQuota = quota.refusal(duplicateOf(req.headers, now) ? 0 : 1);
      if (overQuota) return reply(overQuota);
      reply(enqueue(destination, req.headers, body, schedule, now));
    });
  });

  /** One attempt: a signed request to the destination; non-2xx or unreachable schedules a retry. */
  const attempt = async (message: PublishedMessage) => {
    const key = message.flowControl?.key;
    if (key !== undefined) {
      const n = (inFlight.get(key) ?? 0) + 1;
      inFlight.set(key, n);
      fake.maxInFlight.set(key, Math.max(fake.maxInFlight.get(key) ?? 0, n));
    }
    message.state = "in-flight";
    if (message.retried > 0) quota.charge(1); // every delivery attempt is a message
    const forwarded = Object.entries(message.headers)
      .filter(([name]) => name.startsWith("upstash-forward-"))
      .map(([name, value]) => [name.slice("upstash-forward-".length), String(value)]);
    let status = 0;
    let answer = { headers: {} as Record<string, string[]>, body: "" };
    try {
      const res = await fetch(fake.route(message.destination), {
        method: message.method,
        headers: {
          ...Object.fromEntries(forwarded),
          "Content-Type": String(message.headers["content-type"] ?? "text/plain"),
          "Upstash-Signature": signQStash({ key: options.signingKey ?? TEST_CURRENT_KEY, url: message.destination, body: message.body }),
          "Upstash-Message-Id": message.messageId,
          "Upstash-Retried": String(message.retried),
        },
        body: message.method === "GET" || message.method === "HEAD" ? undefined : message.body,
      });
      status = res.status;
      const headers: Record<string, string[]> = {};
      res.headers.forEach((value, name) => (headers[name] = [value]));
      answer = { headers, body: Buffer.from(await res.arrayBuffer()).toString("base64") };
    } catch {
      status = 0;
    } finally {
      if (key !== undefined) inFlight.set(key, inFlight.get(key)! - 1);
    }
    message.attempts.push(status);
    const outcome = { status, ...answer, now: fake.now() };
    if (message.callback) push(callbackMessage(message, message.callback, outcome, false));
    if (status >= 200 && status < 300) {
      message.state = "delivered";
      return;
    }
    if (message.retried >= message.retries) {
      message.state = "failed"; // QStash's DLQ: no more attempts
      if (message.failureCallback) push(callbackMessage(message, message.failureCallback, outcome, true));
      return;
    }
    message.retried += 1;
    message.state = "pending";
    message.nextAttemptAt = fake.now() + retryDelay(message.retried) * 1000;
  };

  const deliverDue = async () => {
    const started: Promise<void>[] = [];
    for (const message of fake.messages) {
      if (message.state !== "pending" || message.nextAttemptAt > fake.now()) continue;
      const fc = message.flowControl;
      // attempt() counts itself in flight before its first await, so this sees this round's starts.
      if (fc?.parallelism && (inFlight.get(fc.key) ?? 0) >= fc.parallelism) continue; // waits for a slot
      started.push(attempt(message));
    }
    await Promise.all(started);
    return started.length;
  };

  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", () => ready()));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}`,
    quota,
    deliverDue,
    deliverNext: async () => {
      const message = fake.messages.find((m) => m.state === "pending" && m.nextAttemptAt <= fake.now());
      if (!message) return null;
      await attempt(message);
      return message;
    },
    drain: async (rounds = 50) => {
      let total = 0;
      for (let round = 0; round < rounds; round++) {
        const n = await deliverDue();
        if (n === 0) return total;
        total += n;
      }
      throw new Error(`deliveries were still due after ${rounds} rounds`);
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((done) => server.close(() => done()));
    },
  });
}

/** The request QStash would make to deliver `message` (signed with `key`). */
export function deliveryRequest(message: PublishedMessage, key = TEST_CURRENT_KEY): Request {
  return new Request(message.destination, {
    method: "POST",
    headers: {
      "Content-Type": String(message.headers["content-type"] ?? "application/json"),
      "Upstash-Signature": signQStash({ key, url: message.destination, body: message.body }),
      "Upstash-Message-Id": message.messageId,
      "Upstash-Retried": "0",
    },
    body: message.body,
  });
}
