/**
 * The tick's plan (pipeline/tick-plan.ts): every check reads in one snapshot batch and writes in
 * one write batch; a check whose writes fail loses only its own; and the pure decisions the
 * checks make from their rows (schedule repair, watchdog transitions).
 */
import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { defineTickCheck, runTickChecks } from "../../pipeline/index.ts";
import { scheduleRepair, OVERDUE_MS } from "../../pipeline/index.ts";
import { planWatchdog } from "../../agent/watchdog/watchdog.ts";
import { countingClient } from "../support/counting-client.ts";
import { createTestDeps } from "../support/test-deps.ts";

async function countedDeps() {
  const { client, counter } = countingClient(createClient({ url: ":memory:" }));
  const db = openDatabase(client);
  await applyMigrations(db);
  return { deps: await createTestDeps({ db }), counter };
}

/** A check that reads the agent's name (its report) and writes the SQL `write`. */
function renaming(name: string, write: string) {
  return defineTickCheck({
    name,
    reads: (deps, agentId) => ({ agent: deps.db.all<{ name: string | null }>(sql`select name from agents where id = ${agentId}`) }),
    decide: (deps, _agentId, rows) => ({
      statements: [deps.db.run(sql.raw(write))],
      after: () => rows.agent[0]?.name ?? null,
    }),
  });
}

describe("runTickChecks", () => {
  it("reads every check's rows in one batch and writes every check's statements in one more", async () => {
    const { deps, counter } = await countedDeps();
    const checks = [1, 2, 3, 4].map((n) => renaming(`c${n}`, `update agents set name = coalesce(name, '') || '${n}' where id = 'default'`));
    counter.reset();
    const outcomes = await runTickChecks(deps, "default", checks);
    expect(counter.calls).toBe(2);
    expect(outcomes).toEqual(checks.map((c) => ({ name: c.name, report: null }))); // each decided from the snapshot, before any write
    const [row] = (await deps.db.$client.execute("select name from agents where id = 'default'")).rows;
    expect(row!.name).toBe("1234"); // in the checks' order
  });

  it("a check whose writes fail loses only its own: the others' are committed, its failure reported", async () => {
    const { deps } = await countedDeps();
    const good = renaming("good", "update agents set name = 'ticked' where id = 'default'");
    const bad = renaming("bad", "insert into agents (id, created_at) values (null, 0)");
    const outcomes = await runTickChecks(deps, "default", [bad, good]);
    expect(outcomes[0]).toMatchObject({ name: "bad", error: expect.anything() });
    expect(outcomes[1]).toEqual({ name: "good", report: null });
    const [row] = (await deps.db.$client.execute("select name from agents where id = 'default'")).rows;
    expect(row!.name).toBe("ticked");
  });
});

describe("scheduleRepair", () => {
  const now = 1_000_000;
  const free = { slot: 4, nextRunAt: null, leaseToken: null };
  const none = { events: 0, minPriority: null, dueWakes: 0 };
  it("leaves a held lease alone, re-publishes an overdue run, requests one for pending work", () => {
    expect(scheduleRepair({ ...free, leaseToken: "t" }, { events: 3, minPriority: 0, dueWakes: 1 }, now)).toEqual({ kind: "none" });
    expect(scheduleRepair({ ...free, nextRunAt: now - OVERDUE_MS }, none, now)).toEqual({ kind: "republish", slot: 4 });
    expect(scheduleRepair({ ...free, nextRunAt: now - OVERDUE_MS + 1 }, { events: 2, minPriority: 0, dueWakes: 0 }, now)).toEqual({
      kind: "none",
    });
    expect(scheduleRepair(free, { events: 2, minPriority: 0, dueWakes: 0 }, now)).toEqual({ kind: "request", priority: 0 });
    expect(scheduleRepair(free, { events: 1, minPriority: 1, dueWakes: 0 }, now)).toEqual({ kind: "request", priority: 1 });
    expect(scheduleRepair(free, { events: 0, minPriority: null, dueWakes: 2 }, now)).toEqual({
      kind: "request",
      priority: 1,
      dueNow: true,
    });
    expect(scheduleRepair(free, none, now)).toEqual({ kind: "none" });
    expect(scheduleRepair(undefined, { events: 5, minPriority: 0, dueWakes: 5 }, now)).toEqual({ kind: "none" });
  });
});

describe("planWatchdog", () => {
  const now = 5_000;
  const row = (over: Partial<Parameters<typeof planWatchdog>[1][number]>) => ({
    id: 1,
    agentId: "default",
    kind: "poison",
    since: 1_000,
    detail: "2 dropped",
    startNotifiedAt: 1_000,
    clearedAt: null,
    clearNotifiedAt: null,
    ...over,
  });
  it("opens a new condition already marked told, with its start notice", () => {
    const plan = planWatchdog(new Map([["failed_runs", "3 failed"]]), [], now);
    expect(plan).toMatchObject({ started: ["failed_runs"], cleared: [], inserts: [{ kind: "failed_runs", detail: "3 failed" }] });
    expect(plan.notices).toEqual([{ kind: "failed_runs", phase: "started", since: now, detail: "3 failed", clearedAt: null }]);
  });
  it("refreshes a held condition's detail without telling again; says nothing when unchanged", () => {
    expect(planWatchdog(new Map([["poison", "3 dropped"]]), [row({})], now)).toMatchObject({
      updates: [{ id: 1, set: { detail: "3 dropped" } }],
      notices: [],
      started: [],
    });
    expect(planWatchdog(new Map([["poison", "2 dropped"]]), [row({})], now)).toMatchObject({ updates: [], notices: [], inserts: [] });
  });
  it("closes a condition that no longer holds and tells its clearing once", () => {
    const plan = planWatchdog(new Map(), [row({})], now);
    expect(plan.cleared).toEqual(["poison"]);
    expect(plan.updates).toEqual([{ id: 1, set: { clearedAt: now, clearNotifiedAt: now } }]);
    expect(plan.notices.map((n) => n.phase)).toEqual(["cleared"]);
    // Once told, the row is not read again (watchdog.ts reads only open or untold rows); if it is, nothing repeats.
    expect(planWatchdog(new Map(), [row({ clearedAt: now, clearNotifiedAt: now })], now + 1)).toMatchObject({ updates: [], notices: [] });
  });
  it("tells what an older crash left untold: the start, then the clearing", () => {
    const plan = planWatchdog(new Map(), [row({ startNotifiedAt: null })], now);
    expect(plan.notices.map((n) => n.phase)).toEqual(["started", "cleared"]);
    expect(plan.updates).toEqual([{ id: 1, set: { clearedAt: now, startNotifiedAt: now, clearNotifiedAt: now } }]);
  });
});
