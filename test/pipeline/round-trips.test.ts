/**
 * Round trips on the hot paths, counted at the database client: a webhook or chat message costs
 * at most two (its batch, and the delivery when it schedules a run), one when it schedules
 * nothing, plus for chat the lockouts' read once a second; a repeated webhook-id costs one and writes nothing; a cron tick over 1,000 instances
 * costs the provider's pages plus at most five (issue 13's budget) plus the cron's own two, its first tick (every instance new) included.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { buildApp } from "../../functions/app.ts";
import { SimulatorProvider, simulatorPages } from "../../fleet/providers/simulator.ts";
import { RECONCILE_PAGE } from "../../fleet/instances/reconcile.ts";
import { LocalScheduler } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";
import { countingClient } from "../support/counting-client.ts";
import { READ_EVERY_MS } from "../../auth/lockout-view.ts";
import { signedWebhook } from "../support/signed-webhook.ts";

async function countedDeps(vars: Record<string, string> = {}) {
  const { client, counter } = countingClient(createClient({ url: ":memory:" }));
  const db = openDatabase(client);
  await applyMigrations(db);
  const clock = new FakeClock(Date.now());
  // The local scheduler (not started): its publish is the delivery insert, one round trip.
  const scheduler = new LocalScheduler({ db, clock, log: silentLogger, visibilityMs: 60_000 });
  const deps = await createTestDeps({ db, clock, scheduler, vars });
  return { deps, counter, app: buildApp(() => deps) };
}

const total = async (deps: { db: { $client: { execute(sql: string): Promise<{ rows: Record<string, unknown>[] }> } } }, sql: string) =>
  Number((await deps.db.$client.execute(sql)).rows[0]!.n);

describe("round trips per request", () => {
  it("a webhook: two when it schedules a run, one when a run is already scheduled, one (and no write) when repeated", async () => {
    const { deps, counter, app } = await countedDeps();
    await app.request("/webhooks/default/instances", signedWebhook("warm", { instanceId: "sim-0", state: "running" }));
    await deps.db.$client.execute("update agents set next_run_at = null");

    counter.reset();
    expect((await app.request("/webhooks/default/instances", signedWebhook("rt_1", { instanceId: "sim-1", state: "exited" }))).status).toBe(
      202,
    );
    expect(counter.calls).toBe(2);

    counter.reset();
    expect((await app.request("/webhooks/default/instances", signedWebhook("rt_2", { instanceId: "sim-2", state: "exited" }))).status).toBe(
      202,
    );
    expect(counter.calls).toBe(1);

    deps.clock.advance(1000);
    const before = (await deps.db.$client.execute("select last_seen_at, updated_at from instances where id = 'sim-1'")).rows[0];
    counter.reset();
    const repeat = await app.request("/webhooks/default/instances", signedWebhook("rt_1", { instanceId: "sim-1", state: "exited" }));
    expect(repeat.status).toBe(200);
    expect(await repeat.json()).toMatchObject({ duplicate: true, outcome: "pending" });
    expect(counter.calls).toBe(1);
    const after = (await deps.db.$client.execute("select last_seen_at, updated_at from instances where id = 'sim-1'")).rows[0];
    expect(after).toEqual(before);
    expect(await total(deps, "select count(*) as n from instance_events where instance_id = 'sim-1'")).toBe(1);
  });

  // A bearer request checks its address's lockout (issue 10's throttling must refuse even a right
  // token while locked) in the lockouts this process read at most READ_EVERY_MS ago; the operator
  // activity row rides in the ingest batch.
  it("a chat message: its ingest in two when it schedules a run, one when one is already scheduled; lockouts read once a second", async () => {
    const { deps, counter, app } = await countedDeps();
    const post = (text: string) =>
      app.request("/api/agents/default/messages", { method: "POST", headers: authHeaders(), body: JSON.stringify({ text }) });
    await app.request("/api/agents/default", { headers: authHeaders() });
    counter.reset();
    expect((await post("one")).status).toBe(202);
    expect(counter.calls).toBe(2);
    counter.reset();
    expect((await post("two")).status).toBe(202);
    expect(counter.calls).toBe(1);

    deps.clock.advance(READ_EVERY_MS - 1);
    counter.reset();
    expect((await post("three")).status).toBe(202);
    expect(counter.calls).toBe(1);
    deps.clock.advance(1);
    counter.reset();
    expect((await post("four")).status).toBe(202);
    expect(counter.calls).toBe(1 + 1);
  });

  /** Round trips of a first, a changed and a quiet tick over a simulated fleet of `size`. */
  async function tickCosts(size: number) {
    const { deps, counter } = await countedDeps({ SIMULATOR_FAILURE_RATE: "0", RECONCILE_INTERVAL_S: "60" });
    const provider = new SimulatorProvider(deps.db, deps.clock);
    await provider.seed(size);
    const fleet = { ...deps, provider };

    counter.reset();
    await runCronTick(fleet);
    // Read before the checks below, which are round trips of their own.
    const first = counter.calls;
    expect(await total(deps, "select count(*) as n from instances")).toBe(size);
    expect(await total(deps, "select count(*) as n from events where source = 'reconcile'")).toBe(size);

    const failed = Math.ceil(size / 10);
    for (let i = 1; i <= failed; i++) await provider.injectFailure(`sim-${i}`, "exit");
    deps.clock.advance(61_000);
    counter.reset();
    await runCronTick(fleet);
    const second = counter.calls;
    expect(await total(deps, "select count(*) as n from instances where state = 'exited'")).toBe(failed);

    deps.clock.advance(61_000);
    counter.reset();
    await runCronTick(fleet);
    return { first, second, quiet: counter.calls };
  }

  // POST /api/cron's own round trips around the agent's tick: listing the agents, and retention.
  const CRON_OWN = 2;

  // Nothing here is timed; the generous timeout is for a shared machine.
  it("a cron tick over 1,000 simulated instances: provider pages + 5 per agent, first, quiet or not", { timeout: 180_000 }, async () => {
    const small = await tickCosts(10);
    const large = await tickCosts(1000);
    // The list is read a page per round trip (10 pages of 100 where 10 instances are one); a tick
    // that records changes writes them a batch per RECONCILE_PAGE (200) changes; everything else
    // (pipeline repairs, heartbeats, escalations, the watchdog) is one snapshot batch and one write batch.
    const pages = simulatorPages(1000);
    expect(large.quiet).toBeLessThanOrEqual(pages + 5 + CRON_OWN);
    expect(small.quiet).toBeLessThanOrEqual(simulatorPages(10) + 5 + CRON_OWN);
    expect(large.second).toBeLessThanOrEqual(pages + 5 + CRON_OWN); // 100 changes: one write batch
    // The first tick records all 1,000 (a write batch per RECONCILE_PAGE): still pages + 5 (issue 26).
    expect(Math.ceil(1000 / RECONCILE_PAGE)).toBeLessThanOrEqual(2);
    // + 1: the provider balance's reading, one write batch per BALANCE_READ_EVERY_MS (10 min), due on the first tick.
    expect(large.first).toBeLessThanOrEqual(pages + 5 + CRON_OWN + 1);
    expect(large.quiet - small.quiet).toBe(pages - simulatorPages(10));
  });
});
