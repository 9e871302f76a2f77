/**
 * The body limit over real HTTP (@hono/node-server, as the Node host serves the app): a body whose
 * declared Content-Length is over 256 KiB is refused with 413 before anything is read or written;
 * one under it is served; a chunked body (no Content-Length) is counted as it streams.
 */
import { afterEach, describe, expect, it } from "vitest";
import { serve } from "@hono/node-server";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { buildApp, MAX_BODY_BYTES } from "../../functions/app.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

async function served() {
  const deps = await createTestDeps();
  const server = serve({ fetch: buildApp(() => deps).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((ready) => server.once("listening", ready));
  close = () => new Promise((done) => server.close(() => done()));
  const { port } = server.address() as AddressInfo;
  const events = async () => Number((await deps.db.$client.execute("select count(*) as n from events")).rows[0]!.n);
  return { port, events };
}

/** POSTs a chat message; `chunked` sends it without a Content-Length. */
function post(port: number, text: string, chunked = false): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ text });
  const headers: Record<string, string | number> = { ...authHeaders() };
  if (!chunked) headers["content-length"] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/api/agents/default/messages", headers }, (res) => {
      let data = "";
      res.on("data", (chunk: Buffer) => (data += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on("error", reject);
    if (chunked) for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.slice(i, i + 16 * 1024));
    else req.write(body);
    req.end();
  });
}

describe("body limit over HTTP", () => {
  it("a declared length over the limit is refused with 413 JSON and nothing is written", async () => {
    const { port, events } = await served();
    const res = await post(port, "x".repeat(MAX_BODY_BYTES));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error).toMatch(/too large/);
    expect(await events()).toBe(0);
  });

  it("a declared length under the limit is served", async () => {
    const { port, events } = await served();
    expect((await post(port, "x".repeat(8000))).status).toBe(202);
    expect(await events()).toBe(1);
  });

  it("a chunked body is counted as it streams: over the limit 413, under it served", async () => {
    const { port, events } = await served();
    expect((await post(port, "x".repeat(MAX_BODY_BYTES), true)).status).toBe(413);
    expect((await post(port, "small", true)).status).toBe(202);
    expect(await events()).toBe(1);
  });
});
