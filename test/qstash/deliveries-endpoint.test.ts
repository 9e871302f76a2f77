import { createHmac } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { listRuns } from "../../pipeline/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { createWake } from "../../pipeline/index.ts";
import { createTestDeps } from "../support/test-deps.ts";
import {
  deliveryRequest,
  signQStash,
  startFakeQStash,
  TEST_CURRENT_KEY,
  TEST_NEXT_KEY,
  TEST_PUBLIC_URL,
  type FakeQStash,
} from "./fake-qstash.ts";
import { createQStashDeps, tableCounts } from "./qstash-deps.ts";

const URL_ = `${TEST_PUBLIC_URL}/internal/deliveries`;

let fake: FakeQStash;
beforeEach(async () => {
  fake = await startFakeQStash();
});
afterEach(async () => {
  await fake.close();
});

async function setup() {
  const deps = await createQStashDeps(fake);
  return { deps, app: buildApp(() => deps) };
}

function signed(
  body: string,
  options: { key?: string; url?: string; signedBody?: string; now?: number; jti?: string; issuer?: string } = {},
) {
  const signature = signQStash({
    key: options.key ?? TEST_CURRENT_KEY,
    url: options.url ?? URL_,
    body: options.signedBody ?? body,
    now: options.now,
    jti: options.jti,
    issuer: options.issuer,
  });
  return new Request(URL_, { method: "POST", headers: { "Content-Type": "application/json", "Upstash-Signature": signature }, body });
}

/** A correctly keyed token with QStash's claims, but another `alg` (jose would accept HS512 with the same key). */
function withAlgorithm(body: string, alg: "HS512" | "none") {
  const genuine = signQStash({ key: TEST_CURRENT_KEY, url: URL_, body }).split(".");
  const header = Buffer.from(JSON.stringify({ alg, typ: "JWT" })).toString("base64url");
  const signature = alg === "none" ? "" : createHmac("sha512", TEST_CURRENT_KEY).update(`${header}.${genuine[1]}`).digest("base64url");
  const token = `${header}.${genuine[1]}.${signature}`;
  return new Request(URL_, { method: "POST", headers: { "Content-Type": "application/json", "Upstash-Signature": token }, body });
}

describe("POST /internal/deliveries", () => {
  it("a signed run delivery from QStash performs the run", async () => {
    const { deps, app } = await setup();
    await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "m1", payload: { text: "status?" } });
    deps.clock.advance(deps.config.debounceHumanMs);
    const res = await app.request(deliveryRequest(fake.messages[0]!));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: "succeeded" });
    const runs = await listRuns(deps, "default", 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.status).toBe("succeeded");
  });

  it("a signed wake delivery requests a run, which is published back to QStash", async () => {
    const { deps, app } = await setup();
    await createWake(deps, "default", { dueAt: deps.clock.now(), reason: "check", createdByRun: null });
    expect(fake.messages).toHaveLength(1);
    const res = await app.request(deliveryRequest(fake.messages[0]!));
    expect(await res.json()).toEqual({ result: "requested" });
    expect(fake.messages).toHaveLength(2);
    expect(JSON.parse(fake.messages[1]!.body)).toMatchObject({ type: "run", agentId: "default" });
  });

  it("accepts a signature made with the next signing key (rotation)", async () => {
    const { deps, app } = await setup();
    await createWake(deps, "default", { dueAt: deps.clock.now(), reason: "rotate", createdByRun: null });
    const res = await app.request(deliveryRequest(fake.messages[0]!, TEST_NEXT_KEY));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: "requested" });
  });

  const body = JSON.stringify({ type: "wake", agentId: "default", wakeId: 1 });
  const rejected: [string, () => Request][] = [
    ["unsigned", () => new Request(URL_, { method: "POST", body })],
    ["signed with an unknown key", () => signed(body, { key: "sig_attacker" })],
    ["expired", () => signed(body, { now: Math.floor(Date.now() / 1000) - 3600 })],
    ["tampered body", () => signed(body.replace('"wakeId":1', '"wakeId":2'), { signedBody: body })],
    ["signed for another url", () => signed(body, { url: "https://evil.test/internal/deliveries" })],
    ["signed with HS512 (only HS256 is QStash's)", () => withAlgorithm(body, "HS512")],
    ["with alg none", () => withAlgorithm(body, "none")],
    ["not issued by Upstash", () => signed(body, { issuer: "Mallory" })],
    ["garbage signature", () => new Request(URL_, { method: "POST", headers: { "Upstash-Signature": "not.a.jwt" }, body })],
  ];
  for (const [name, request] of rejected) {
    it(`refuses a delivery ${name} with 401 and writes nothing`, async () => {
      const { deps, app } = await setup();
      await createWake(deps, "default", { dueAt: deps.clock.now(), reason: "x", createdByRun: null });
      const before = await tableCounts(deps);
      const published = fake.messages.length;
      const res = await app.request(request());
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "signature rejected" });
      expect(await tableCounts(deps)).toEqual(before);
      expect(fake.messages).toHaveLength(published);
    });
  }

  it("refuses a replayed signature (same jti) with 401 and writes nothing", async () => {
    const { deps, app } = await setup();
    await createWake(deps, "default", { dueAt: deps.clock.now(), reason: "x", createdByRun: null });
    const first = signed(body, { jti: "jwt_replay_1" });
    const replay = first.clone();
    expect((await app.request(first)).status).toBe(200);
    const before = await tableCounts(deps);
    const published = fake.messages.length;
    const res = await app.request(replay);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "signature rejected" });
    expect(await tableCounts(deps)).toEqual(before);
    expect(fake.messages).toHaveLength(published);
  });

  it("answers 489 non-retryable naming the problem for a signed body that is no delivery, writing nothing", async () => {
    const { deps, app } = await setup();
    const before = await tableCounts(deps);
    const cases: [string, RegExp][] = [
      ["{nope", /not JSON/],
      [JSON.stringify({ type: "run", agentId: "default", slot: -1 }), /slot/],
      [JSON.stringify({ type: "explode" }), /type/],
    ];
    for (const [body, problem] of cases) {
      const res = await app.request(signed(body));
      expect(res.status, body).toBe(489);
      // QStash stops retrying only with this header (upstash/docs qstash/features/retry.mdx).
      expect(res.headers.get("Upstash-NonRetryable-Error"), body).toBe("true");
      expect((await res.json()).error, body).toMatch(problem);
    }
    expect(await tableCounts(deps)).toEqual(before);
    expect(fake.messages).toHaveLength(0);
  });

  it("refuses a wrongly signed body that is no delivery with 401, not 489", async () => {
    const { deps, app } = await setup();
    const before = await tableCounts(deps);
    const res = await app.request(signed("{nope", { key: "sig_attacker" }));
    expect(res.status).toBe(401);
    expect(res.headers.get("Upstash-NonRetryable-Error")).toBeNull();
    expect(await res.json()).toEqual({ error: "signature rejected" });
    expect(await tableCounts(deps)).toEqual(before);
  });

  it("a failing handler answers 500 so QStash retries, and that retry is not taken for a replay", async () => {
    const { deps, app } = await setup();
    await createWake(deps, "default", { dueAt: deps.clock.now(), reason: "x", createdByRun: null });
    // QStash is down while the handler publishes the run it requests: the handler fails.
    fake.failWith = 503;
    const request = signed(body, { jti: "jwt_retry_1" });
    const retry = request.clone();
    const res = await app.request(request);
    expect(res.status).toBe(500);
    expect((await tableCounts(deps)).accepted_signatures).toBe(0);
    fake.failWith = null;
    const retried = await app.request(retry);
    expect(retried.status).toBe(200);
    expect((await tableCounts(deps)).accepted_signatures).toBe(1);
  });

  it("prunes accepted token ids once their signatures have expired", async () => {
    const { deps, app } = await setup();
    const now = Math.floor(Date.now() / 1000);
    await createWake(deps, "default", { dueAt: deps.clock.now(), reason: "x", createdByRun: null });
    expect((await app.request(signed(body, { jti: "jwt_old", now }))).status).toBe(200);
    expect((await tableCounts(deps)).accepted_signatures).toBe(1);
    deps.clock.advance(301_000 + 5_000 + 1);
    expect((await app.request(signed(body, { jti: "jwt_new", now }))).status).toBe(200);
    const rows = await deps.db.$client.execute("select jti from accepted_signatures");
    expect(rows.rows.map((r) => r.jti)).toEqual(["jwt_new"]);
  });

  it("does not exist (404, nothing internal) when no signing keys are configured", async () => {
    const deps = await createTestDeps();
    const res = await buildApp(() => deps).request(signed(body));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not found: POST /internal/deliveries" });
  });
});
