import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, QstashDailyRatelimitError, Receiver } from "@upstash/qstash";
import { afterEach, describe, expect, it } from "vitest";
import { DEDUP_WINDOW_MS, startFakeQStash, TEST_CURRENT_KEY, TEST_NEXT_KEY, TEST_QSTASH_TOKEN, type FakeQStash } from "./fake-qstash.ts";

/** A destination on loopback that answers from a script and records what reached it. */
async function startDestination(answer: (n: number) => number = () => 200, holdMs = 0) {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let active = 0;
  let maxActive = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      active++;
      maxActive = Math.max(maxActive, active);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const status = answer(received.length);
      setTimeout(() => {
        active--;
        res.writeHead(status).end();
      }, holdMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    maxActive: () => maxActive,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let now = Date.UTC(2026, 11, 1, 0, 0, 0);
const clock = () => now;
const DAY_MS = 86_400_000;
/** The next UTC midnight after `now`: where QStash's daily quota resets. */
const nextMidnight = () => (Math.floor(now / DAY_MS) + 1) * DAY_MS;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function setup(answer?: (n: number) => number, holdMs?: number) {
  const destination = await startDestination(answer, holdMs);
  const fake = await startFakeQStash({ now: clock, retryDelaySeconds: (n) => 10 * n });
  closers.push(destination.close, fake.close);
  return { destination, fake };
}

function publish(fake: FakeQStash, destination: string, headers: Record<string, string> = {}, body = '{"hello":"world"}') {
  return fetch(`${fake.baseUrl}/v2/publish/${destination}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TEST_QSTASH_TOKEN}`, "Content-Type": "application/json", ...headers },
    body,
  });
}

describe("the QStash fake refuses what QStash refuses", () => {
  it("a missing or wrong token is 401; malformed Upstash-* headers are 400 naming the header; nothing is enqueued", async () => {
    const { fake, destination } = await setup();
    const anonymous = await fetch(`${fake.baseUrl}/v2/publish/${destination.url}`, { method: "POST", body: "{}" });
    expect(anonymous.status).toBe(401);
    expect((await publish(fake, destination.url, { Authorization: "Bearer nope" })).status).toBe(401);
    const bad: [Record<string, string>, RegExp][] = [
      [{ "Upstash-Not-Before": "soon" }, /Not-Before/],
      [{ "Upstash-Not-Before": String(now) }, /seconds, not milliseconds/],
      [{ "Upstash-Delay": "10 minutes" }, /Upstash-Delay/],
      [{ "Upstash-Retries": "-1" }, /Upstash-Retries/],
      [{ "Upstash-Retries": "4" }, /exceeds the plan/],
      [{ "Upstash-Flow-Control-Key": "agent-a" }, /sent together/],
      [{ "Upstash-Flow-Control-Key": "agent-a", "Upstash-Flow-Control-Value": "parallelism=zero" }, /Flow-Control-Value/],
      [{ "Upstash-Method": "FETCH" }, /Upstash-Method/],
      [{ "Upstash-Deduplication-Key": "x" }, /unknown header upstash-deduplication-key/],
      [{ "Upstash-Deduplication-Id": "run:default:1" }, /^DeduplicationId cannot contain ':'$/],
      [{ "Upstash-Delay": "30m1h" }, /Upstash-Delay/],
      [{ "Upstash-Delay": "1h1h" }, /Upstash-Delay/],
      [{ "Upstash-Delay": "1h 30m" }, /Upstash-Delay/],
      [{ "Upstash-Callback": "callback.example/hook" }, /Upstash-Callback must be a URL/],
      [{ "Upstash-Failure-Callback": "ftp://callback.example/hook" }, /Upstash-Failure-Callback must be a URL/],
      [{ "Upstash-Callback-Retries": "1" }, /upstash-callback-retries needs Upstash-Callback/],
      [{ "Upstash-Callback": "https://callback.example/hook", "Upstash-Callback-Retries": "9" }, /Upstash-Callback-Retries 9 exceeds/],
      [{ "Upstash-Callback": "https://callback.example/hook", "Upstash-Callback-Colour": "red" }, /unknown header upstash-callback-colour/],
    ];
    for (const [headers, message] of bad) {
      const res = await publish(fake, destination.url, headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
    expect((await publish(fake, "not-a-url")).status).toBe(400);
    expect(fake.messages).toHaveLength(0);
  });
});

describe("the QStash fake accepts the documented forms", () => {
  it("takes compound Upstash-Delay values (1h30m, 1d10h30m) and ids with '-' and '_'", async () => {
    const { fake, destination } = await setup();
    for (const delay of ["50s", "1h30m", "1d10h30m"]) {
      const res = await publish(fake, destination.url, { "Upstash-Delay": delay, "Upstash-Deduplication-Id": `run_3adefault-${delay}` });
      expect(res.status, delay).toBe(201);
    }
    expect(fake.messages.map((m) => (m.notBefore - now) / 1000)).toEqual([50, 5400, 37800 + 86400]);
  });

  it("calls Upstash-Callback after every attempt and Upstash-Failure-Callback once the retries run out, each a message of its own", async () => {
    const { fake, destination } = await setup((n) => (n === 1 ? 503 : 200));
    const callbacks = await startDestination();
    closers.push(callbacks.close);
    const res = await publish(
      fake,
      destination.url,
      {
        "Upstash-Callback": `${callbacks.url}?on=done`,
        "Upstash-Callback-Forward-X-Token": "cb-1",
        "Upstash-Callback-Retries": "0",
        "Upstash-Failure-Callback": `${callbacks.url}?on=failed`,
        "Upstash-Failure-Callback-Method": "PUT",
        "Upstash-Forward-X-Trace": "t-1",
        "Upstash-Retries": "1",
      },
      "original",
    );
    expect(res.status).toBe(201);
    const { messageId } = await res.json();
    await fake.deliverDue(); // 503: the callback is told, a retry is scheduled
    now += 10_000;
    await fake.drain(); // the retry succeeds: the callback is told again
    expect(fake.quota.usedToday).toBe(4); // the message, its retry and two callbacks
    const bodies = callbacks.received.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => [b.status, b.retried, b.maxRetries])).toEqual([
      [503, 0, 1],
      [200, 1, 1],
    ]);
    expect(bodies[0]).toMatchObject({
      sourceMessageId: messageId,
      url: destination.url,
      method: "POST",
      sourceHeader: { "x-trace": ["t-1"] },
    });
    expect(Buffer.from(bodies[0].sourceBody, "base64").toString()).toBe("original");
    expect(callbacks.received[0]!.headers["x-token"]).toBe("cb-1");
    expect(fake.messages.find((m) => m.destination.endsWith("on=failed"))).toBeUndefined();

    // Now one that never succeeds: its failure callback arrives once, with a DLQ id.
    const failing = await setup(() => 500);
    await publish(failing.fake, failing.destination.url, {
      "Upstash-Retries": "0",
      "Upstash-Failure-Callback": `${callbacks.url}?on=failed`,
      "Upstash-Failure-Callback-Method": "PUT",
    });
    await failing.fake.drain();
    const failureCallback = failing.fake.messages.find((m) => m.destination.endsWith("on=failed"))!;
    expect(failureCallback).toMatchObject({ method: "PUT", state: "delivered" });
    expect(JSON.parse(failureCallback.body)).toMatchObject({ status: 500, retried: 0, maxRetries: 0, dlqId: expect.any(String) });
  });
});

describe("the QStash fake's daily quota", () => {
  it("answers 429 with the daily limit headers the SDK reads into QstashDailyRatelimitError, and enqueues nothing", async () => {
    const { fake, destination } = await setup();
    fake.quota.limit = 2;
    expect((await publish(fake, destination.url, { "Upstash-Deduplication-Id": "a" })).status).toBe(201);
    expect((await publish(fake, destination.url)).status).toBe(201);
    const refused = await publish(fake, destination.url);
    expect(refused.status).toBe(429);
    const midnight = String(nextMidnight() / 1000);
    expect(
      Object.fromEntries(["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((h) => [h, refused.headers.get(h)])),
    ).toEqual({
      "ratelimit-limit": "2",
      "ratelimit-remaining": "0",
      "ratelimit-reset": midnight,
    });
    // A duplicate enqueues nothing, so it is still answered as one.
    expect((await publish(fake, destination.url, { "Upstash-Deduplication-Id": "a" })).status).toBe(202);

    const client = new Client({ token: TEST_QSTASH_TOKEN, baseUrl: fake.baseUrl, retry: false });
    const error = await client.publishJSON({ url: destination.url, body: { n: 3 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QstashDailyRatelimitError);
    expect(error).toMatchObject({ limit: "2", remaining: "0", reset: midnight, status: 429 });
    const batch = await fetch(`${fake.baseUrl}/v2/batch`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TEST_QSTASH_TOKEN}` },
      body: JSON.stringify([{ destination: destination.url, body: "x" }]),
    });
    expect(batch.status).toBe(429);
    expect(fake.messages).toHaveLength(2);
  });

  it("counts every delivery attempt, retries included, and starts again at UTC midnight or on reset()", async () => {
    const { fake, destination } = await setup(() => 500);
    fake.quota.limit = 3;
    await publish(fake, destination.url, { "Upstash-Retries": "2" });
    expect(fake.quota.usedToday).toBe(1);
    await fake.deliverDue();
    now += 10_000;
    await fake.deliverDue();
    expect(fake.quota.usedToday).toBe(2); // the first attempt and one retry
    now += 20_000;
    await fake.deliverDue();
    expect(fake.quota.usedToday).toBe(3);
    expect((await publish(fake, destination.url)).status).toBe(429);
    // A batch that does not fit what is left today is refused whole.
    fake.quota.reset();
    const batch = (n: number) =>
      fetch(`${fake.baseUrl}/v2/batch`, {
        method: "POST",
        headers: { Authorization: `Bearer ${TEST_QSTASH_TOKEN}` },
        body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ destination: destination.url, body: String(i) }))),
      });
    expect((await batch(4)).status).toBe(429);
    expect((await batch(3)).status).toBe(200);
    expect((await publish(fake, destination.url)).status).toBe(429);
    now = nextMidnight() + 1000;
    expect((await publish(fake, destination.url)).status).toBe(201);
    expect(fake.quota.usedToday).toBe(1);
    expect(fake.quota.charged).toBe(7);
  });
});

describe("the QStash fake's batch endpoint (POST /v2/batch)", () => {
  const batch = (fake: FakeQStash, body: unknown, token = TEST_QSTASH_TOKEN) =>
    fetch(`${fake.baseUrl}/v2/batch`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });

  it("enqueues each message with its own headers, answers one result per message, and deduplicates like a publish", async () => {
    const { fake, destination } = await setup();
    const res = await batch(fake, [
      {
        destination: destination.url,
        headers: { "Upstash-Deduplication-Id": "one", "Upstash-Not-Before": String(now / 1000 + 60) },
        body: "a",
      },
      { destination: destination.url, headers: { "Upstash-Deduplication-Id": "two" }, body: "b" },
    ]);
    expect(res.status).toBe(200);
    const answers = (await res.json()) as { messageId: string; deduplicated?: boolean }[];
    expect(answers).toHaveLength(2);
    expect(fake.messages.map((m) => [m.body, m.notBefore])).toEqual([
      ["a", now + 60_000],
      ["b", now],
    ]);
    const again = (await (
      await batch(fake, [{ destination: destination.url, headers: { "Upstash-Deduplication-Id": "one" }, body: "a" }])
    ).json()) as typeof answers;
    expect(again).toEqual([{ messageId: answers[0]!.messageId, url: destination.url, deduplicated: true }]);
    expect(fake.messages).toHaveLength(2);
    await fake.deliverDue();
    expect(destination.received.map((r) => r.body)).toEqual(["b"]);
  });

  it("refuses a malformed batch whole (400 naming the element) and a bad token (401); nothing is enqueued", async () => {
    const { fake, destination } = await setup();
    expect((await batch(fake, [{ destination: destination.url }], "nope")).status).toBe(401);
    const bad: [unknown, RegExp][] = [
      [{ destination: destination.url }, /JSON array/],
      [[], /non-empty/],
      [[{ destination: destination.url }, { body: "x" }], /batch\[1\]: destination is required/],
      [[{ destination: destination.url, headers: { "Upstash-Retries": "9" } }], /batch\[0\]: .*exceeds the plan/],
      [[{ destination: "nowhere" }], /batch\[0\]: destination must be a URL/],
      [[{ destination: destination.url, body: { not: "a string" } }], /batch\[0\]: body must be a string/],
    ];
    for (const [body, message] of bad) {
      const res = await batch(fake, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
    expect(fake.messages).toHaveLength(0);
  });
});

describe("the QStash fake delivers like QStash", () => {
  it("signs each delivery so the SDK's Receiver accepts it: sub = destination, body hash, fresh jti", async () => {
    const { fake, destination } = await setup();
    await publish(fake, destination.url, { "Upstash-Forward-X-Trace": "t-1" });
    await publish(fake, destination.url);
    expect(await fake.deliverDue()).toBe(2);
    const receiver = new Receiver({ currentSigningKey: TEST_CURRENT_KEY, nextSigningKey: TEST_NEXT_KEY });
    const jtis = new Set<string>();
    for (const { headers, body } of destination.received) {
      const signature = String(headers["upstash-signature"]);
      await expect(receiver.verify({ signature, body, url: destination.url })).resolves.toBe(true);
      await expect(receiver.verify({ signature, body, url: "https://elsewhere.test/hook" })).rejects.toThrow();
      const claims = JSON.parse(Buffer.from(signature.split(".")[1]!, "base64url").toString());
      expect(claims).toMatchObject({ iss: "Upstash", sub: destination.url });
      expect(claims.exp).toBeGreaterThan(claims.nbf);
      jtis.add(claims.jti);
    }
    expect(jtis.size).toBe(2);
    expect(destination.received[0]!.headers["x-trace"]).toBe("t-1");
    expect(destination.received[0]!.headers["upstash-retried"]).toBe("0");
  });

  it("honours Upstash-Not-Before (seconds): nothing is delivered before it", async () => {
    const { fake, destination } = await setup();
    await publish(fake, destination.url, { "Upstash-Not-Before": String(Math.floor(now / 1000) + 60) });
    expect(await fake.deliverDue()).toBe(0);
    now += 59_000;
    expect(await fake.deliverDue()).toBe(0);
    now += 1_000;
    expect(await fake.deliverDue()).toBe(1);
    expect(destination.received).toHaveLength(1);
  });

  it("deduplicates an id for 10 minutes (202 with the first messageId), and accepts it again after", async () => {
    const { fake, destination } = await setup();
    const first = await publish(fake, destination.url, { "Upstash-Deduplication-Id": "run-1" });
    expect(first.status).toBe(201);
    const { messageId } = await first.json();
    now += DEDUP_WINDOW_MS - 1;
    const dup = await publish(fake, destination.url, { "Upstash-Deduplication-Id": "run-1" });
    expect(dup.status).toBe(202);
    expect(await dup.json()).toMatchObject({ messageId, deduplicated: true });
    now += 1;
    const later = await publish(fake, destination.url, { "Upstash-Deduplication-Id": "run-1" });
    expect(later.status).toBe(201);
    expect(fake.messages).toHaveLength(2);
  });

  it("keeps at most `parallelism` deliveries of one flow-control key in flight", async () => {
    const { fake, destination } = await setup(() => 200, 30);
    for (let i = 0; i < 4; i++) {
      await publish(fake, destination.url, { "Upstash-Flow-Control-Key": "fw-agent-a", "Upstash-Flow-Control-Value": "parallelism=1" });
    }
    for (let i = 0; i < 4; i++) {
      await publish(fake, destination.url, { "Upstash-Flow-Control-Key": "fw-agent-b", "Upstash-Flow-Control-Value": "Parallelism=2" });
    }
    await fake.drain();
    expect(destination.received).toHaveLength(8);
    expect(fake.maxInFlight.get("fw-agent-a")).toBe(1);
    expect(fake.maxInFlight.get("fw-agent-b")).toBe(2);
  });

  it("retries a non-2xx answer after the back-off, Upstash-Retries times and no more", async () => {
    const { fake, destination } = await setup(() => 500);
    await publish(fake, destination.url, { "Upstash-Retries": "2" });
    expect(await fake.deliverDue()).toBe(1);
    expect(await fake.deliverDue()).toBe(0); // backing off
    now += 10_000;
    expect(await fake.deliverDue()).toBe(1);
    now += 20_000;
    expect(await fake.deliverDue()).toBe(1);
    now += 3_600_000;
    expect(await fake.deliverDue()).toBe(0); // gave up: 1 attempt + 2 retries
    expect(fake.messages[0]!.state).toBe("failed");
    expect(destination.received.map((r) => r.headers["upstash-retried"])).toEqual(["0", "1", "2"]);
  });

  it("stops retrying once the destination answers 2xx", async () => {
    const { fake, destination } = await setup((n) => (n === 1 ? 503 : 200));
    await publish(fake, destination.url);
    await fake.deliverDue();
    now += 10_000;
    await fake.deliverDue();
    now += 3_600_000;
    expect(await fake.deliverDue()).toBe(0);
    expect(fake.messages[0]!.state).toBe("delivered");
    expect(fake.messages[0]!.attempts).toEqual([503, 200]);
  });
});
