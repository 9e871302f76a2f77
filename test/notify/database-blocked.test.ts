/**
 * Turso never silent (issue #37, item 4): past its plan's quota Turso answers statements with the
 * Hrana error code `BLOCKED` ("Operation was blocked: …"; tursodatabase/libsql
 * libsql-server/src/error.rs and src/hrana/stmt.rs, as test/support/hrana-server.ts plays it).
 * On the Worker's database path (@libsql/client/web over Hrana, the loopback Hrana server) and the
 * app both hosts serve, and the Node host on a Turso URL: /healthz is 503 naming it (`db: "blocked"`), one notice goes straight to
 * the Slack channel (no notification row, no scheduler: the database cannot record either), at
 * most once an hour; the agent's health lists `database_blocked`; a cron tick that meets it tells
 * nothing more; once writes are accepted again /healthz is 200 and the condition is gone.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient as createWebClient } from "@libsql/client/web";
import { buildApp } from "../../functions/app.ts";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { quotaRefusal } from "../../db/quota-refusal.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { notifications } from "../../schema/index.ts";
import { startHranaServer, type HranaServer } from "../support/hrana-server.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";
import { startReceiver, type Receiver } from "./receiver.ts";
import { startNodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => void (await Promise.all(open.splice(0).map((o) => o.close()))));

async function onTurso(): Promise<{ hrana: HranaServer; slack: Receiver; deps: Awaited<ReturnType<typeof createTestDeps>> }> {
  const hrana = await startHranaServer({ authToken: "turso-token" });
  const client = createWebClient({ url: hrana.url, authToken: "turso-token" });
  const slack = await startReceiver("/services/T000/B000/XXX", 200, "slack");
  open.push(slack, { close: async () => client.close() }, hrana);
  const db = openDatabase(client);
  await applyMigrations(db);
  const deps = await createTestDeps({
    db,
    vars: { DATABASE_URL: hrana.url, SLACK_WEBHOOK_URL: slack.url, ALLOW_PRIVATE_URLS: "true", SIMULATOR_INSTANCES: "0" },
  });
  return { hrana, slack, deps };
}

describe("the database refuses writes for its plan's quota", () => {
  it("/healthz is 503 naming it, one notice goes out directly, the agent's health lists it, and it clears", async () => {
    const { hrana, slack, deps } = await onTurso();
    const app = buildApp(() => deps);
    const healthz = async () => {
      const res = await app.request("/healthz");
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect((await healthz()).status).toBe(200);

    hrana.block("writes");
    const first = await healthz();
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({
      ok: false,
      db: "blocked",
      dbWritable: false,
      dbError: expect.stringMatching(/^BLOCKED: .*Operation was blocked/),
    });
    expect(slack.rejected).toEqual([]);
    expect(slack.received).toHaveLength(1);
    expect(JSON.parse(slack.received[0]!.body).text).toMatch(/database refuses writes[\s\S]*BLOCKED/);

    // Polled again, and the cron tick meets it too: still one notice (once an hour per process).
    deps.clock.advance(60_000);
    expect((await healthz()).status).toBe(503);
    await runScheduledTick(deps).catch(() => undefined);
    expect(slack.received).toHaveLength(1);
    const health = await (await app.request("/api/agents/default/health", { headers: authHeaders() })).json();
    expect(health).toMatchObject({
      ok: false,
      conditions: [expect.objectContaining({ kind: "database_blocked", detail: expect.stringContaining("BLOCKED") })],
    });

    // An hour later, still refused: told once more.
    deps.clock.advance(60 * 60_000);
    expect((await healthz()).status).toBe(503);
    expect(slack.received).toHaveLength(2);
    expect(await deps.db.select().from(notifications)).toEqual([]); // nothing could be recorded, nothing was

    hrana.block(null);
    expect(await healthz()).toMatchObject({ status: 200, body: { ok: true, db: "ok" } });
    const cleared = await (await app.request("/api/agents/default/health", { headers: authHeaders() })).json();
    expect(cleared.conditions).toEqual([]);
    expect(slack.received).toHaveLength(2);
  });

  it("the Node host on a Turso URL: /healthz 503 naming BLOCKED, one notice over three polls", async () => {
    const hrana = await startHranaServer({ authToken: "turso-token" });
    open.push(hrana);
    const client = createWebClient({ url: hrana.url, authToken: "turso-token" });
    await applyMigrations(openDatabase(client));
    client.close();
    const slack = await startReceiver("/services/T000/B000/XXX", 200, "slack");
    open.push(slack);
    const host = await startNodeHost(
      {
        PORT: "0",
        DATABASE_URL: hrana.url,
        DATABASE_AUTH_TOKEN: "turso-token",
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        SLACK_WEBHOOK_URL: slack.url,
        ALLOW_PRIVATE_URLS: "true",
        SIMULATOR_INSTANCES: "0",
      },
      { log: silentLogger, cronIntervalMs: 3_600_000 },
    );
    open.unshift({ close: () => host.stop() });
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    hrana.block("writes");
    for (let poll = 0; poll < 3; poll++) {
      const res = await fetch(`${host.url}/healthz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ db: "blocked", dbError: expect.stringContaining("Operation was blocked") });
    }
    expect(slack.received).toHaveLength(1);
    hrana.block(null);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it("reads Turso's BLOCKED and a database over its size (SQLITE_FULL) through wrapped causes, and nothing else", () => {
    expect(quotaRefusal({ message: "Failed query", cause: { code: "BLOCKED", message: "Operation was blocked: quota" } })).toBe(
      "BLOCKED: Operation was blocked: quota",
    );
    expect(quotaRefusal({ code: "SQLITE_FULL", message: "SQLite error: database or disk is full" })).toMatch(/^SQLITE_FULL: /);
    expect(quotaRefusal({ code: "SQLITE_CONSTRAINT", message: "UNIQUE constraint failed" })).toBeNull();
    expect(quotaRefusal(new Error("fetch failed"))).toBeNull();
  });
});
