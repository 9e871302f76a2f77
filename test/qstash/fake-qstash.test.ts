import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Receiver } from "@upstash/qstash";
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

describe("the QStash fake's batch endpoint (POST /v2/batch)", () => {
  const batch = (fake: FakeQStash, body: unknown, token = TEST_QSTASH_TOKEN) =>
    fetch(`${fake.baseUrl}/v2/batch`, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });

  it("enqueues each message with its own headers, answers one result per message, and deduplicates like a publish", async () => {
    const { fake, destination } = await setup();
    const res = await batch(fake, [
      { destination: destination.url, headers: { "Upstash-Deduplication-Id": "one", "Upstash-Not-Before": String(now / 1000 + 60) }, body: "a" },
      { destination: destination.url, headers: { "Upstash-Deduplication-Id": "two" }, body: "b" },
    ]);
    expect(res.status).toBe(200);
    const answers = (await res.json()) as { messageId: string; deduplicated?: boolean }[];
    expect(answers).toHaveLength(2);
    expect(fake.messages.map((m) => [m.body, m.notBefore])).toEqual([["a", now + 60_000], ["b", now]]);
    const again = (await (await batch(fake, [{ destination: destination.url, headers: { "Upstash-Deduplication-Id": "one" }, body: "a" }])).json()) as typeof answers;
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
