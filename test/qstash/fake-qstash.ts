/**
 * A local QStash for tests: a node:http server speaking the publish API the SDK uses
 * (`POST /v2/publish/<destination url>`, bearer token, `Upstash-*` headers, 201/202 with a
 * messageId, deduplication on `Upstash-Deduplication-Id`), which can then deliver what it holds
 * to the app with a real QStash-style signature (HS256 JWT over the body) made from test keys.
 */
import { createHash, createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export const TEST_QSTASH_TOKEN = "test-qstash-token";
export const TEST_CURRENT_KEY = "sig_test_current_4f1c2a9e7b";
export const TEST_NEXT_KEY = "sig_test_next_8d3e6b0c5a";
export const TEST_PUBLIC_URL = "https://fleetwarden.test";

export interface PublishedMessage {
  messageId: string;
  destination: string;
  headers: IncomingHttpHeaders;
  body: string;
}

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
  const signature = createHmac("sha256", options.key ?? TEST_CURRENT_KEY).update(`${header}.${claims}`).digest("base64url");
  return `${header}.${claims}.${signature}`;
}

export interface FakeQStash {
  baseUrl: string;
  /** Every accepted publish, in order (duplicates excluded). */
  messages: PublishedMessage[];
  /** Every publish request received, duplicates included. */
  requests: PublishedMessage[];
  /** Makes the next publishes answer this status (e.g. 500) until reset to null. */
  failWith: number | null;
  close(): Promise<void>;
}

export async function startFakeQStash(token = TEST_QSTASH_TOKEN): Promise<FakeQStash> {
  const seen = new Map<string, string>();
  const fake: Omit<FakeQStash, "baseUrl" | "close"> = { messages: [], requests: [], failWith: null };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(json));
      };
      const prefix = "/v2/publish/";
      if (req.method !== "POST" || !req.url?.startsWith(prefix)) return reply(404, { error: "not found" });
      if (req.headers.authorization !== `Bearer ${token}`) return reply(401, { error: "invalid token" });
      const message: PublishedMessage = {
        messageId: `msg_${randomUUID()}`,
        destination: req.url.slice(prefix.length),
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      fake.requests.push(message);
      if (fake.failWith) return reply(fake.failWith, { error: "injected failure" });
      const dedupId = req.headers["upstash-deduplication-id"];
      if (typeof dedupId === "string" && seen.has(dedupId)) return reply(202, { messageId: seen.get(dedupId) });
      if (typeof dedupId === "string") seen.set(dedupId, message.messageId);
      fake.messages.push(message);
      reply(201, { messageId: message.messageId });
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", () => ready()));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
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
