/**
 * Prepared statements kept by the embedded client (db/statement-cache.ts, db/embedded-client.ts):
 * a repeated statement is prepared once by the driver (counted at `Database.prototype.prepare`)
 * and gives the same results as a fresh @libsql/client — across parameters, a rolled-back batch,
 * a failed statement and a schema change —, the client never holds more than MAX_STATEMENTS of
 * them, and nothing of this reaches a libsql connection the client did not open.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import Database from "libsql";
import { createClient } from "@libsql/client";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeClient } from "../../db/node-client.ts";
import { MAX_STATEMENTS } from "../../db/statement-cache.ts";

const fileUrl = () => `file:${join(mkdtempSync(join(tmpdir(), "fw-stmt-")), "t.db")}`;

/** Counts what the driver is asked to prepare, by SQL text (a test-only spy, removed after each test). */
const prepares = new Map<string, number>();
const driverPrepare = Database.prototype.prepare;
beforeEach(() => {
  prepares.clear();
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    prepares.set(sql, (prepares.get(sql) ?? 0) + 1);
    return driverPrepare.call(this, sql);
  } as typeof driverPrepare;
});
afterEach(() => {
  Database.prototype.prepare = driverPrepare;
});
const prepared = (sql: string) => prepares.get(sql) ?? 0;

describe("statement cache", () => {
  it("prepares a repeated statement once and answers as a fresh client does", async () => {
    const url = fileUrl();
    const cached = await createNodeClient(url);
    await cached.execute("create table t (id integer primary key, k text unique, v integer)");
    const insert = "insert into t (k, v) values (?, ?) on conflict do nothing returning id";
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await cached.execute({ sql: insert, args: [`k${i % 10}`, i] })).rows.map((r) => r.id));
    expect(prepared(insert)).toBe(1);
    expect(ids).toEqual([...Array.from({ length: 10 }, (_, i) => [i + 1]), ...Array(10).fill([])]);

    // A batch that fails rolls back; the same cached statements then work as before.
    await expect(cached.batch([{ sql: insert, args: ["new", 1] }, "insert into missing values (1)"])).rejects.toThrow(/missing/);
    expect((await cached.execute({ sql: insert, args: ["new", 2] })).rows.map((r) => r.id)).toEqual([11]);
    expect(prepared(insert)).toBe(1);

    // A schema change: the cached select sees the new column.
    const select = "select * from t where k = ?";
    await cached.execute({ sql: select, args: ["k1"] });
    await cached.execute("alter table t add column w integer default 7");
    expect((await cached.execute({ sql: select, args: ["k1"] })).rows[0]).toMatchObject({ k: "k1", v: 1, w: 7 });
    expect(prepared(select)).toBe(2);

    const fresh = createClient({ url });
    for (const sql of [select, "select count(*) as n, sum(v) as s from t"]) {
      const [a, b] = [
        await cached.execute({ sql, args: sql === select ? ["k3"] : [] }),
        await fresh.execute({ sql, args: sql === select ? ["k3"] : [] }),
      ];
      expect(a.rows.map((r) => ({ ...r }))).toEqual(b.rows.map((r) => ({ ...r })));
      expect(a.columns).toEqual(b.columns);
    }
    fresh.close();
    cached.close();
  });

  it("a script run through executeMultiple empties the cache (it may change the schema)", async () => {
    const client = await createNodeClient(":memory:");
    await client.executeMultiple("create table t (a integer); insert into t values (1);");
    const select = "select * from t";
    expect((await client.execute(select)).columns).toEqual(["a"]);
    await client.executeMultiple("alter table t add column b integer default 2");
    expect((await client.execute(select)).columns).toEqual(["a", "b"]);
    expect(prepared(select)).toBe(2);
    client.close();
  });

  it("keeps at most MAX_STATEMENTS, evicting the least recently used", async () => {
    const client = await createNodeClient(":memory:");
    const text = (i: number) => `select ${i} as n`;
    for (let i = 0; i <= MAX_STATEMENTS; i++) await client.execute(text(i));
    // The newest are still held; the first one was evicted and is prepared again.
    await client.execute(text(MAX_STATEMENTS));
    expect(prepared(text(MAX_STATEMENTS))).toBe(1);
    expect((await client.execute(text(0))).rows.map((r) => ({ ...r }))).toEqual([{ n: 0 }]);
    expect(prepared(text(0))).toBe(2);
    // Using one makes it the newest: text(2) is now the oldest, used it survives the next eviction.
    await client.execute(text(2));
    await client.execute("select 'another' as n");
    await client.execute(text(2));
    expect(prepared(text(2))).toBe(1);
    client.close();
  });

  it("asks the driver once per statement whether it returns rows and for its integer mode, and answers as before", async () => {
    const proto = Object.getPrototypeOf(new Database(":memory:").prepare("select 1")) as Record<string, (...args: unknown[]) => unknown>;
    const calls = { raw: 0, safeIntegers: 0 };
    const original = { raw: proto.raw!, safeIntegers: proto.safeIntegers! };
    proto.raw = function (this: unknown, ...args: unknown[]) {
      calls.raw++;
      return original.raw.apply(this, args);
    };
    proto.safeIntegers = function (this: unknown, ...args: unknown[]) {
      calls.safeIntegers++;
      return original.safeIntegers.apply(this, args);
    };
    try {
      const url = fileUrl();
      const cached = await createNodeClient(url);
      await cached.execute("create table t (id integer primary key, v integer)");
      const insert = { sql: "insert into t (v) values (?)", args: [2 ** 40] };
      const select = "select id, v from t order by id";
      calls.raw = calls.safeIntegers = 0;
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await cached.execute(insert), await cached.execute(select));
      // One question each per statement, not per execution: two statements.
      expect(calls).toEqual({ raw: 2, safeIntegers: 2 });

      const fresh = createClient({ url: fileUrl() });
      await fresh.execute("create table t (id integer primary key, v integer)");
      const expected = [];
      for (let i = 0; i < 5; i++) expected.push(await fresh.execute(insert), await fresh.execute(select));
      const shape = (r: Awaited<ReturnType<typeof fresh.execute>>) => [
        r.rowsAffected,
        r.lastInsertRowid,
        r.columns,
        r.rows.map((row) => ({ ...row })),
      ];
      expect(results.map(shape)).toEqual(expected.map(shape));
      expect(results.at(-1)!.rows.map((r) => r.v)).toEqual(Array(5).fill(2 ** 40));
      fresh.close();
      cached.close();
    } finally {
      Object.assign(proto, original);
    }
  });

  it("leaves every other libsql connection in the process as the driver made it", async () => {
    const client = await createNodeClient(fileUrl());
    const sql = "select 1 as n";
    await client.execute(sql);
    await client.execute(sql);

    const other = new Database(":memory:");
    const [first, second] = [other.prepare(sql), other.prepare(sql)];
    // Prepared anew each time, with the driver's own methods (no cached statement, no wrapper).
    expect(first).not.toBe(second);
    expect(Object.keys(first)).not.toContain("raw");
    expect(first.raw(true).all()).toEqual([[1]]);
    other.close();
    client.close();
  });
});
