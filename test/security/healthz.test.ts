/**
 * /healthz tells the truth: it writes to the database (a read-only connection — as with a full
 * disk, reads still pass — answers 503 `db: "not writable"`), and reports the local scheduler's
 * backlog of due deliveries.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { deliveries, healthProbe } from "../../schema/index.ts";
import { LocalScheduler } from "../../pipeline/index.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("GET /healthz", () => {
  it("writes a health row and answers 200 when the database accepts writes", async () => {
    const deps = await createTestDeps();
    const res = await buildApp(() => deps).request("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, db: "ok", dbWritable: true });
    expect(await deps.db.select().from(healthProbe)).toEqual([{ id: 1, checkedAt: deps.clock.now() }]);
  });

  it("answers 503 when the database can be read but not written", async () => {
    const deps = await createTestDeps();
    await deps.db.$client.execute("PRAGMA query_only = ON");
    expect((await deps.db.$client.execute("select 1 as one")).rows[0]!.one).toBe(1);
    const res = await buildApp(() => deps).request("/healthz");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ok: false, db: "not writable", dbWritable: false });
  });

  it("reports the local scheduler's backlog: due, undelivered deliveries and the oldest wait", async () => {
    const deps = await createTestDeps();
    const scheduler = new LocalScheduler({ db: deps.db, clock: deps.clock, log: deps.log, visibilityMs: 60_000 });
    const app = buildApp(() => ({ ...deps, scheduler }));
    expect((await (await app.request("/healthz")).json()).schedulerBacklog).toEqual({ due: 0, oldestWaitS: 0 });
    const now = deps.clock.now();
    await deps.db.insert(deliveries).values([
      { dedupKey: "a", body: {}, dueAt: now - 90_000, createdAt: now },
      { dedupKey: "b", body: {}, dueAt: now - 5_000, createdAt: now },
      { dedupKey: "c", body: {}, dueAt: now + 60_000, createdAt: now },
      { dedupKey: "d", body: {}, dueAt: now - 500_000, status: "delivered", createdAt: now },
    ]);
    const body = await (await app.request("/healthz")).json();
    expect(body).toMatchObject({ ok: true, scheduler: { kind: "local", ok: true }, schedulerBacklog: { due: 2, oldestWaitS: 90 } });
  });
});
