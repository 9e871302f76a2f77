import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signQStash, TEST_CURRENT_KEY, TEST_NEXT_KEY } from "../qstash/fake-qstash.ts";
import { bootWorker, buildBundle, startUnreachableDatabase, type RecordingDatabase } from "./worker-boot.ts";
import { waitFor } from "../support/child-process-waits.ts";

const ADMIN_TOKEN = "worker-test-admin-token-0123456789";
const PUBLIC_URL = "https://fleetwarden.worker.test";

describe("the deploy bundle", () => {
  it("builds with wrangler deploy --dry-run to under 1 MiB gzipped", async () => {
    const bundle = await buildBundle();
    expect(bundle.gzipBytes).toBeGreaterThan(10_000);
    expect(bundle.gzipBytes, `largest inputs (minified bytes): ${bundle.largest.join(", ")}`).toBeLessThan(1024 * 1024);
  }, 120_000); // a full esbuild bundle: well over the default timeout on a busy 2-core machine
});

describe("the Worker in workerd, database unreachable", () => {
  let db: RecordingDatabase;
  let worker: Awaited<ReturnType<typeof bootWorker>>;

  beforeAll(async () => {
    db = await startUnreachableDatabase();
    worker = await bootWorker({
      DATABASE_URL: db.url,
      ADMIN_TOKEN,
      QSTASH_TOKEN: "worker-test-qstash-token",
      QSTASH_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
      QSTASH_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
      PUBLIC_URL,
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await db?.close();
  });

  it("answers /healthz with the database unreachable and the Worker's adapters", async () => {
    const res = await worker.fetch("/healthz");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ok: false, db: "unreachable", scheduler: { kind: "qstash", ok: null } });
    // it really tried the configured database
    expect(db.bodies.length).toBeGreaterThan(0);
  });

  it("refuses the operator API without a token, or with a wrong one, as 401 JSON", async () => {
    const missing = await worker.fetch("/api/agents/default");
    expect(missing.status).toBe(401);
    expect((await missing.json()).error).toMatch(/Bearer/);
    const wrong = await worker.fetch("/api/agents/default", { headers: { Authorization: "Bearer not-the-admin-token-at-all" } });
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).error).toMatch(/invalid token/);
  });

  it("serves the API's OpenAPI 3.1 document and its page, with the database unreachable", async () => {
    const res = await worker.fetch("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { "x-fleetwarden-role": string }>> };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.paths["/api/operators"]?.get?.["x-fleetwarden-role"]).toBe("admin");
    const page = await worker.fetch("/openapi");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<code>/api/agents/{agent}/trigger</code>");
  });

  it("answers an unknown route with 404 JSON", async () => {
    const res = await worker.fetch("/no/such/route");
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatch(/not found/);
  });

  it("verifies QStash signatures inside workerd: unsigned and wrongly signed are 401", async () => {
    const body = JSON.stringify({ type: "wake", agentId: "default", wakeId: 1 });
    const unsigned = await worker.fetch("/internal/deliveries", { method: "POST", body });
    expect(unsigned.status).toBe(401);
    const url = `${PUBLIC_URL}/internal/deliveries`;
    const forged = await worker.fetch("/internal/deliveries", {
      method: "POST",
      headers: { "Upstash-Signature": signQStash({ key: "sig_forged", url, body }) },
      body,
    });
    expect(forged.status).toBe(401);
    // A genuine signature passes verification and reaches the (unreachable) database: not a 401.
    const genuine = await worker.fetch("/internal/deliveries", {
      method: "POST",
      headers: { "Upstash-Signature": signQStash({ key: TEST_NEXT_KEY, url, body }) },
      body,
    });
    expect(genuine.status).toBe(500);
  });

  it("wires the scheduled handler to the cron tick", async () => {
    const before = db.bodies.length;
    const res = await worker.fetch("/__scheduled?cron=*+*+*+*+*");
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/Ran scheduled event/);
    // The handler waits for the tick, which went to the database: it reads the agents and the
    // scheduler's health (and, the database being unreachable, resolves anyway: no uncaught error).
    const read = await waitFor(
      "the tick's read of the agents and the scheduler's health",
      async () => db.bodies.slice(before).find((body) => /from \\"agents\\".*scheduler_health/.test(body)),
      15_000,
    );
    expect(read).toContain("scheduler_health");
  });
});

describe("the Worker with a configuration error", () => {
  it("answers a 500 JSON naming the variable", async () => {
    const worker = await bootWorker({ DATABASE_URL: "http://127.0.0.1:9", ADMIN_TOKEN });
    try {
      const res = await worker.fetch("/healthz");
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ variable: "QSTASH_TOKEN", error: expect.stringMatching(/QSTASH_TOKEN/) });
    } finally {
      await worker.dispose();
    }
  });
});
