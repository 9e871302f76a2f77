/**
 * The providers' one HTTP client (fleet/providers/provider-http.ts), against a loopback server
 * answering a script and counting requests: the options a provider chooses per call — a removal
 * whose retry finds the resource gone, a create repeated only where the provider cannot have
 * acted (`unacted`), a launch sent once (`never`) — and what every create's failure means to a
 * caller (final, except a 429 or a connection refused before anything was sent).
 */
import { createServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { callJson, type JsonCall, type RetryPolicy } from "../../fleet/providers/provider-http.ts";
import { ProviderError } from "../../fleet/providers/provider.ts";
import { listenLoopback } from "../support/loopback-server.ts";

interface Scripted {
  status: number;
  raw: string;
}

let closeServer: (() => Promise<void>) | null = null;
afterEach(async () => {
  await closeServer?.();
  closeServer = null;
});

/** A server answering `script[i]` to its i-th request (the last one again after that). */
async function scripted(...script: Scripted[]): Promise<{ url: string; requests: () => number }> {
  let seen = 0;
  const server = createServer((req, res) => {
    const answer = script[Math.min(seen++, script.length - 1)]!;
    req.resume();
    req.on("end", () => res.writeHead(answer.status, { "Content-Type": "application/json" }).end(answer.raw));
  });
  const { origin, close } = await listenLoopback(server);
  closeServer = close;
  return { url: `${origin}/things/1`, requests: () => seen };
}

const json = (status: number, body: unknown = {}): Scripted => ({ status, raw: JSON.stringify(body) });
const call = (url: string, retry: RetryPolicy, extra: Partial<JsonCall> = {}): JsonCall => ({
  provider: "Cloud",
  method: "DELETE",
  url,
  what: "DELETE /things/1",
  headers: {},
  body: {},
  retry,
  ...extra,
});
const noWait = { sleep: async () => {}, maxAttempts: 4 };

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

/** A fetch whose first `refusals` calls are refused before anything is sent, then a real one. */
function refusedFirst(refusals: number): { fetch: typeof fetch; calls: () => number } {
  let calls = 0;
  const refused = () =>
    new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) });
  return { fetch: async (input, init) => (calls++ < refusals ? Promise.reject(refused()) : fetch(input, init)), calls: () => calls };
}

const reset: typeof fetch = async () => {
  throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
};

describe("the providers' HTTP client", () => {
  it("goneOnRetryIsDone: a 404 on a retry is the earlier attempt's success; on the first attempt, or without the option, an error", async () => {
    const lost = await scripted(json(502), json(404, { error: "no such thing" }));
    expect(await callJson(noWait, call(lost.url, "reads", { goneOnRetryIsDone: true }))).toEqual({ status: 404, json: null });
    expect(lost.requests()).toBe(2);

    await closeServer!();
    const plain = await scripted(json(502), json(404, { error: "no such thing" }));
    expect((await failure(callJson(noWait, call(plain.url, "reads")))).status).toBe(404);

    await closeServer!();
    const missing = await scripted(json(404, { error: "no such thing" }));
    expect((await failure(callJson(noWait, call(missing.url, "reads", { goneOnRetryIsDone: true })))).status).toBe(404);
    expect(missing.requests()).toBe(1);
  });

  it("unacted: a 429 and a refused connection are repeated; a 5xx is sent once and final", async () => {
    const limited = await scripted(json(429), json(200, { id: 7 }));
    expect((await callJson(noWait, call(limited.url, "unacted"))).json).toEqual({ id: 7 });
    expect(limited.requests()).toBe(2);

    const refused = refusedFirst(2);
    expect((await callJson({ ...noWait, fetch: refused.fetch }, call(limited.url, "unacted"))).json).toEqual({ id: 7 });
    expect(refused.calls()).toBe(3);

    await closeServer!();
    for (const status of [500, 502, 503, 504]) {
      const broken = await scripted(json(status));
      expect(await failure(callJson(noWait, call(broken.url, "unacted")))).toMatchObject({
        status,
        retryable: false,
        message: expect.stringContaining("not retried"),
      });
      expect(broken.requests()).toBe(1);
      await closeServer!();
      closeServer = null;
    }
  });

  it("unacted and never: a reset connection and a 2xx that is not JSON are final; a refused connection stays retryable", async () => {
    for (const retry of ["unacted", "never"] as const) {
      let resets = 0;
      const counted: typeof fetch = (input, init) => (resets++, reset(input, init));
      expect(await failure(callJson({ ...noWait, fetch: counted }, call("http://127.0.0.1:9/x", retry)))).toMatchObject({
        retryable: false,
      });
      expect(resets, retry).toBe(1);

      const html = await scripted({ status: 200, raw: "<html>" });
      expect(await failure(callJson(noWait, call(html.url, retry)))).toMatchObject({ status: 502, retryable: false });
      expect(html.requests(), retry).toBe(1);
      await closeServer!();
      closeServer = null;
    }
    const refused = refusedFirst(Infinity);
    expect(await failure(callJson({ ...noWait, fetch: refused.fetch }, call("http://127.0.0.1:9/x", "never")))).toMatchObject({
      retryable: true,
    });
    expect(refused.calls()).toBe(1);
  });

  it("reads and refusals leave a lost answer retryable, and reads repeat it", async () => {
    let resets = 0;
    const counted: typeof fetch = (input, init) => (resets++, reset(input, init));
    expect(await failure(callJson({ ...noWait, fetch: counted }, call("http://127.0.0.1:9/x", "reads")))).toMatchObject({
      retryable: true,
    });
    expect(resets).toBe(4);
    expect(await failure(callJson({ ...noWait, fetch: counted }, call("http://127.0.0.1:9/x", "refusals")))).toMatchObject({
      retryable: true,
    });
    expect(resets).toBe(5);
  });
});
