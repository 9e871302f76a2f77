/**
 * A refused publish is recorded, not silent: the monitored scheduler writes the scheduler_health
 * row once when publishing starts failing (quota, 5xx, 401, network) and once when it works again,
 * never per publish, and /healthz answers 503 naming the scheduler meanwhile.
 */
import { QstashDailyRatelimitError } from "@upstash/qstash";
import { createClient } from "@libsql/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { MonitoredScheduler, qstashSchedulerFromConfig, readSchedulerHealth, type PublishRequest } from "../../pipeline/index.ts";
import { schedulerHealth } from "../../schema/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { countingClient } from "../support/counting-client.ts";
import { createTestDeps, testConfig } from "../support/test-deps.ts";
import { startFakeQStash, type FakeQStash } from "./fake-qstash.ts";
import { qstashVars } from "./qstash-deps.ts";

let fake: FakeQStash;
beforeEach(async () => {
  fake = await startFakeQStash();
});
afterEach(async () => {
  await fake.close();
});

let n = 0;
const request = (): PublishRequest => ({
  dedupKey: `notify:${++n}`,
  notBefore: 0,
  body: { type: "notify", agentId: "default", deliveryId: n },
});

/** A monitored QStash scheduler on a counted database, and the app serving /healthz from it. */
async function setup(vars: Record<string, string> = {}) {
  const { client, counter } = countingClient(createClient({ url: ":memory:" }));
  const db = openDatabase(client);
  await applyMigrations(db);
  const clock = new FakeClock(Date.now());
  const config = testConfig({ ...qstashVars(fake), ...vars });
  const deps = await createTestDeps({ db, clock, config });
  const scheduler = new MonitoredScheduler(qstashSchedulerFromConfig(config), deps);
  const withScheduler = { ...deps, scheduler };
  /** Database calls the scheduler made during `publish` (each a write of the health row). */
  const writesDuring = async (publish: () => Promise<unknown>) => {
    counter.reset();
    await publish();
    return counter.calls;
  };
  return { deps: withScheduler, scheduler, clock, writesDuring, app: buildApp(() => withScheduler) };
}

describe("the monitored scheduler records refusals", () => {
  it("QStash at its daily quota: the first refusal writes failing since then, later ones write nothing; /healthz is 503 naming it", async () => {
    const { deps, scheduler, clock, writesDuring, app } = await setup();
    expect(await writesDuring(() => scheduler.publish(request()))).toBe(1); // a process's first publish records ok
    expect(await writesDuring(() => scheduler.publish(request()))).toBe(0);
    expect((await app.request("/healthz")).status).toBe(200);

    fake.quota.limit = fake.quota.usedToday;
    const failingAt = clock.now();
    let refusal: unknown;
    expect(await writesDuring(() => scheduler.publish(request()).catch((e: unknown) => (refusal = e)))).toBe(1);
    expect(refusal).toBeInstanceOf(QstashDailyRatelimitError); // the caller still sees the refusal
    clock.advance(60_000);
    for (let i = 0; i < 3; i++) expect(await writesDuring(() => scheduler.publish(request()).catch(() => {}))).toBe(0);
    expect(await writesDuring(() => scheduler.publishMany!([request(), request()]).catch(() => {}))).toBe(0);

    expect(await readSchedulerHealth(deps)).toMatchObject({
      kind: "qstash",
      ok: false,
      since: failingAt,
      error: expect.stringMatching(/^QstashDailyRatelimitError: Exceeded daily rate limit/),
    });
    const res = await app.request("/healthz");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      ok: false,
      scheduler: { kind: "qstash", ok: false, since: new Date(failingAt).toISOString(), error: expect.stringMatching(/daily rate limit/) },
    });

    fake.quota.reset();
    const recoveredAt = clock.now();
    expect(await writesDuring(() => scheduler.publish(request()))).toBe(1);
    expect(await writesDuring(() => scheduler.publish(request()))).toBe(0);
    const healthy = await app.request("/healthz");
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toMatchObject({
      ok: true,
      scheduler: { kind: "qstash", ok: true, since: new Date(recoveredAt).toISOString() },
    });
  });

  const failWith = (status: number) => () => {
    fake.failWith = status;
  };
  const refusals: [string, () => void, Record<string, string>, RegExp][] = [
    ["a 5xx", failWith(503), {}, /QstashError/],
    ["a refused token", () => {}, { QSTASH_TOKEN: "not-the-token" }, /invalid token/],
    ["a burst rate limit", failWith(429), {}, /QstashRatelimitError/],
    ["QStash unreachable", () => {}, { QSTASH_URL: "http://127.0.0.1:9" }, /fetch failed|ECONNREFUSED/],
  ];
  it.each(refusals)("%s is recorded as failing too", async (_name, breakIt, vars, error) => {
    const { deps, scheduler } = await setup(vars);
    breakIt();
    await expect(scheduler.publish(request())).rejects.toThrow();
    expect(await readSchedulerHealth(deps)).toMatchObject({ ok: false, error: expect.stringMatching(error) });
  });

  it("a health write that fails never hides the publish's own outcome, and is tried again next time", async () => {
    const { deps, scheduler } = await setup();
    await deps.db.$client.execute("PRAGMA query_only = ON");
    await expect(scheduler.publish(request())).resolves.toBeUndefined();
    await deps.db.$client.execute("PRAGMA query_only = OFF");
    await scheduler.publish(request());
    expect(await deps.db.select().from(schedulerHealth)).toEqual([
      expect.objectContaining({ kind: "qstash", failingSince: null, lastSuccessAt: deps.clock.now() }),
    ]);
  });
});
