import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { createNodeClient } from "../../db/node-client.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { backoffMs, LocalScheduler, MAX_ATTEMPTS } from "../../pipeline/index.ts";
import type { DeliveryBody } from "../../pipeline/index.ts";
import { createTestDb } from "../support/test-deps.ts";

const body = (slot: number): DeliveryBody => ({ type: "run", agentId: "default", slot });
const schedulers: LocalScheduler[] = [];
afterEach(async () => void (await Promise.all(schedulers.splice(0).map((s) => s.stop()))));

async function make(db = undefined as Awaited<ReturnType<typeof createTestDb>> | undefined, clock = new FakeClock()) {
  const database = db ?? (await createTestDb());
  const scheduler = new LocalScheduler({ db: database, clock, log: silentLogger, visibilityMs: 60_000, maxSleepMs: 60_000 });
  schedulers.push(scheduler);
  return { db: database, clock, scheduler };
}

async function rows(db: Awaited<ReturnType<typeof createTestDb>>) {
  const rs = await db.$client.execute("select dedup_key, status, attempts, due_at, last_error from deliveries order by id");
  return rs.rows;
}

describe("local scheduler", () => {
  it("delivers no earlier than notBefore, and a repeated dedup key once", async () => {
    const { clock, scheduler } = await make();
    const seen: DeliveryBody[] = [];
    await scheduler.start(async (b) => void seen.push(b));
    await scheduler.publish({ dedupKey: "k1", notBefore: clock.now() + 5000, body: body(1) });
    await scheduler.publish({ dedupKey: "k1", notBefore: clock.now(), body: body(99) });
    await scheduler.settle();
    expect(seen).toEqual([]);
    clock.advance(5000);
    await scheduler.settle();
    expect(seen).toEqual([body(1)]);
    clock.advance(60_000);
    await scheduler.settle();
    expect(seen).toHaveLength(1);
  });

  it("retries a failing handler with exponential backoff and gives up after the last attempt", async () => {
    const { db, clock, scheduler } = await make();
    let calls = 0;
    await scheduler.start(async () => {
      calls++;
      throw new Error(`boom ${calls}`);
    });
    await scheduler.publish({ dedupKey: "k", notBefore: clock.now(), body: body(1) });
    await scheduler.settle();
    expect(calls).toBe(1);
    expect((await rows(db))[0]).toMatchObject({
      status: "pending",
      attempts: 1,
      due_at: clock.now() + backoffMs(1),
      last_error: "Error: boom 1",
    });
    clock.advance(backoffMs(1) - 1);
    await scheduler.settle();
    expect(calls).toBe(1);
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      clock.advance(backoffMs(attempt));
      await scheduler.settle();
    }
    expect(calls).toBe(MAX_ATTEMPTS);
    expect((await rows(db))[0]).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS });
    clock.advance(3_600_000);
    await scheduler.settle();
    expect(calls).toBe(MAX_ATTEMPTS);
  });

  it("delivers after a restart whatever fell due while the process was down, including what it held when it died", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fw-sched-"));
    const url = `file:${join(dir, "db.sqlite")}`;
    const clock = new FakeClock();
    const firstDb = openDatabase(await createNodeClient(url));
    await applyMigrations(firstDb);
    const first = await make(firstDb, clock);
    // the first process claims one delivery and dies holding it
    await first.scheduler.start(() => new Promise(() => {}));
    await first.scheduler.publish({ dedupKey: "held", notBefore: clock.now(), body: body(1) });
    await first.scheduler.drain();
    await first.scheduler.publish({ dedupKey: "later", notBefore: clock.now() + 30_000, body: body(2) });
    schedulers.splice(schedulers.indexOf(first.scheduler), 1); // killed, not stopped

    clock.advance(45_000); // down for a while
    const secondDb = openDatabase(await createNodeClient(url));
    const second = await make(secondDb, clock);
    const seen: DeliveryBody[] = [];
    await second.scheduler.start(async (b) => void seen.push(b));
    await second.scheduler.settle();
    expect(seen).toEqual(expect.arrayContaining([body(1), body(2)]));
    expect((await rows(secondDb)).map((r) => r.status)).toEqual(["delivered", "delivered"]);
  });
});
