/**
 * The dead-man ping (DEADMAN_URL, jobs/deadman-ping.ts) against a local receiver, through the
 * scheduled tick itself (jobs/scheduled-tick.ts): a completed tick GETs the URL once; while an
 * agent's watchdog has an open condition it GETs `<url>/fail` instead; a receiver that hangs is
 * given up after 5 s and one that is gone does not fail the tick; unset, nothing is sent. The
 * receiver follows healthchecks.io's ping API (https://healthchecks.io/docs/http_api/: `GET
 * /ping/<uuid>` success, `/ping/<uuid>/fail` failure; Cronitor's telemetry URLs take the same
 * shape): it answers 200 "OK" to those two paths and 404 to anything else.
 */
import { databaseWritable, noteDatabaseError } from "../../notify/database-refusal.ts";
import { createServer } from "node:http";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { archiveAgent, createAgent } from "../../pipeline/index.ts";
import { DEADMAN_TIMEOUT_MS, failUrl } from "../../jobs/deadman-ping.ts";
import { watchdogConditions } from "../../schema/index.ts";
import { listenLoopback } from "../support/loopback-server.ts";
import { createTestDeps } from "../support/test-deps.ts";

const CHECK = "/ping/5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278";
let pings: string[] = [];
let hang = false;
let receiver: Awaited<ReturnType<typeof listenLoopback>>;

beforeAll(async () => {
  receiver = await listenLoopback(
    createServer((req, res) => {
      pings.push(`${req.method} ${req.url}`);
      if (hang) return; // never answers
      const known = req.method === "GET" && (req.url === CHECK || req.url === `${CHECK}/fail`);
      res.writeHead(known ? 200 : 404, { "content-type": "text/plain" }).end(known ? "OK" : "not found");
    }),
  );
});
afterAll(() => receiver?.close());

const depsWith = (url: string | null) =>
  createTestDeps({ vars: { SIMULATOR_INSTANCES: "0", CRON_INLINE_AGENTS: "0", ...(url ? { DEADMAN_URL: url } : {}) } });

describe("the dead-man ping", () => {
  it("a completed scheduled tick pings once; with an open watchdog condition it pings <url>/fail; cleared, success again", async () => {
    const deps = await depsWith(`${receiver.origin}${CHECK}`);
    pings = [];
    await runScheduledTick(deps);
    expect(pings).toEqual([`GET ${CHECK}`]);

    // An archived agent's open condition is not the loop's: still success.
    await createAgent(deps.db, { id: "old", settings: {} }, deps.clock.now());
    await deps.db.insert(watchdogConditions).values({ agentId: "old", kind: "poison", since: deps.clock.now(), detail: "x" });
    await archiveAgent(deps.db, "old", deps.clock.now());
    deps.clock.advance(60_000);
    await runScheduledTick(deps);
    expect(pings).toEqual([`GET ${CHECK}`, `GET ${CHECK}`]);
    pings = [`GET ${CHECK}`];

    // An open condition as the watchdog records it (CRON_INLINE_AGENTS=0: no agent's tick runs in
    // this invocation, so the watchdog does not re-judge it here).
    const [row] = await deps.db
      .insert(watchdogConditions)
      .values({ agentId: "default", kind: "failed_runs", since: deps.clock.now(), detail: "3 failed runs in a row" })
      .returning();
    deps.clock.advance(60_000);
    await runScheduledTick(deps);
    expect(pings).toEqual([`GET ${CHECK}`, `GET ${CHECK}/fail`]);

    await deps.db.update(watchdogConditions).set({ clearedAt: deps.clock.now() }).where(eq(watchdogConditions.id, row!.id));
    deps.clock.advance(60_000);
    await runScheduledTick(deps);
    expect(pings).toEqual([`GET ${CHECK}`, `GET ${CHECK}/fail`, `GET ${CHECK}`]);
  });

  it("a database refusing writes for its quota pings <url>/fail until a write succeeds again", async () => {
    const deps = await depsWith(`${receiver.origin}${CHECK}`);
    pings = [];
    const blocked = Object.assign(new Error("Operation was blocked"), { code: "BLOCKED" });
    expect(await noteDatabaseError(deps, blocked)).not.toBeNull();
    await runScheduledTick(deps);
    expect(pings).toEqual([`GET ${CHECK}/fail`]);
    databaseWritable(deps);
    deps.clock.advance(60_000);
    await runScheduledTick(deps);
    expect(pings).toEqual([`GET ${CHECK}/fail`, `GET ${CHECK}`]);
  });

  it("unset, nothing is sent", async () => {
    pings = [];
    await runScheduledTick(await depsWith(null));
    expect(pings).toEqual([]);
  });

  it("a hanging receiver is given up after 5 s and a gone one does not fail the tick", async () => {
    const deps = await depsWith(`${receiver.origin}${CHECK}`);
    pings = [];
    hang = true;
    const started = Date.now();
    const report = await runScheduledTick(deps);
    hang = false;
    const took = Date.now() - started;
    expect(report.schedulerFailing).toBe(false);
    expect(pings).toEqual([`GET ${CHECK}`]);
    expect(took).toBeGreaterThanOrEqual(DEADMAN_TIMEOUT_MS - 100);
    expect(took).toBeLessThan(DEADMAN_TIMEOUT_MS + 5_000);

    const gone = await depsWith("http://127.0.0.1:9/ping/nothing-listens");
    await expect(runScheduledTick(gone)).resolves.toMatchObject({ schedulerFailing: false });
  }, 30_000);

  it("<url>/fail keeps the check's query and does not double a trailing slash", () => {
    expect(failUrl("https://hc-ping.com/abc/")).toBe("https://hc-ping.com/abc/fail");
    expect(failUrl("https://cronitor.link/p/key/job?state=complete")).toBe("https://cronitor.link/p/key/job/fail?state=complete");
  });
});
