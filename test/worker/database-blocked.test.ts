/**
 * Turso never silent (issue #37, item 4), in the deploy bundle under workerd: the Worker's
 * database is the loopback Hrana server (test/support/hrana-server.ts), which answers `BLOCKED`
 * as Turso does past its plan's quota (tursodatabase/libsql libsql-server/src/error.rs
 * `Error::Blocked`, src/hrana/stmt.rs code "BLOCKED"). /healthz is 503 with `db: "blocked"`, and
 * one notice goes straight to the Slack webhook (a loopback receiver) however often it is polled
 * within the hour: the isolate remembers it, the database cannot.
 */
import { createClient } from "@libsql/client/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { TEST_CURRENT_KEY, TEST_NEXT_KEY } from "../qstash/fake-qstash.ts";
import { startHranaServer, type HranaServer } from "../support/hrana-server.ts";
import { startReceiver, type Receiver } from "../notify/receiver.ts";
import { bootWorker } from "./worker-boot.ts";

const ADMIN_TOKEN = "worker-test-admin-token-0123456789";

describe("the Worker in workerd, Turso refusing writes for quota", () => {
  let hrana: HranaServer;
  let slack: Receiver;
  let worker: Awaited<ReturnType<typeof bootWorker>>;

  beforeAll(async () => {
    hrana = await startHranaServer({ authToken: "turso-test-token" });
    const client = createClient({ url: hrana.url, authToken: "turso-test-token" });
    await applyMigrations(openDatabase(client));
    client.close();
    slack = await startReceiver("/services/T000/B000/XXX", 200, "slack");
    worker = await bootWorker({
      DATABASE_URL: hrana.url,
      DATABASE_AUTH_TOKEN: "turso-test-token",
      ADMIN_TOKEN,
      QSTASH_TOKEN: "worker-test-qstash-token",
      QSTASH_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
      QSTASH_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
      PUBLIC_URL: "https://fleetwarden.worker.test",
      SLACK_WEBHOOK_URL: slack.url,
      ALLOW_PRIVATE_URLS: "true",
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await hrana?.close();
    await slack?.close();
  });

  it("answers /healthz 503 naming BLOCKED and tells Slack once, directly", async () => {
    const first = await worker.fetch("/healthz");
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ db: "ok" });

    hrana.block("writes");
    for (let poll = 0; poll < 3; poll++) {
      const res = await worker.fetch("/healthz");
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ ok: false, db: "blocked", dbError: expect.stringContaining("Operation was blocked") });
    }
    expect(slack.rejected).toEqual([]);
    expect(slack.received).toHaveLength(1);
    expect(JSON.parse(slack.received[0]!.body).text).toMatch(/database refuses writes[\s\S]*BLOCKED/);

    hrana.block(null);
    const back = await worker.fetch("/healthz");
    expect(back.status).toBe(200);
    expect(slack.received).toHaveLength(1);
  });
});
