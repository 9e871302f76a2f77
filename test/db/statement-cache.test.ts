/**
 * Prepared statements kept per embedded connection (db/statement-cache.ts): a repeated statement
 * is prepared once and gives the same results as a fresh one — across parameters, a rolled-back
 * batch, a failed statement and a schema change — and a connection never holds more than
 * MAX_STATEMENTS of them.
 */
import { describe, expect, it } from "vitest";
import Database from "libsql";
import { createClient } from "@libsql/client";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeClient } from "../../db/node-client.ts";
import { installStatementCache, MAX_STATEMENTS, statementCacheStats } from "../../db/statement-cache.ts";

const fileUrl = () => `file:${join(mkdtempSync(join(tmpdir(), "fw-stmt-")), "t.db")}`;
const delta = (before: { hits: number; misses: number }) => ({ hits: statementCacheStats.hits - before.hits, misses: statementCacheStats.misses - before.misses });

describe("statement cache", () => {
  it("prepares a repeated statement once and answers as a fresh client does", async () => {
    const url = fileUrl();
    const cached = await createNodeClient(url);
    await cached.execute("create table t (id integer primary key, k text unique, v integer)");
    const insert = "insert into t (k, v) values (?, ?) on conflict do nothing returning id";
    const before = { ...statementCacheStats };
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await cached.execute({ sql: insert, args: [`k${i % 10}`, i] })).rows.map((r) => r.id));
    expect(delta(before)).toEqual({ hits: 19, misses: 1 });
    expect(ids).toEqual([...Array.from({ length: 10 }, (_, i) => [i + 1]), ...Array(10).fill([])]);

    // A batch that fails rolls back; the same cached statements then work as before.
    await expect(cached.batch([{ sql: insert, args: ["new", 1] }, "insert into missing values (1)"])).rejects.toThrow(/missing/);
    expect((await cached.execute({ sql: insert, args: ["new", 2] })).rows.map((r) => r.id)).toEqual([11]);

    // A schema change: the cached select sees the new column.
    const select = "select * from t where k = ?";
    await cached.execute({ sql: select, args: ["k1"] });
    await cached.execute("alter table t add column w integer default 7");
    expect((await cached.execute({ sql: select, args: ["k1"] })).rows[0]).toMatchObject({ k: "k1", v: 1, w: 7 });

    const fresh = createClient({ url });
    for (const sql of [select, "select count(*) as n, sum(v) as s from t"]) {
      const [a, b] = [await cached.execute({ sql, args: sql === select ? ["k3"] : [] }), await fresh.execute({ sql, args: sql === select ? ["k3"] : [] })];
      expect(a.rows.map((r) => ({ ...r }))).toEqual(b.rows.map((r) => ({ ...r })));
      expect(a.columns).toEqual(b.columns);
    }
    fresh.close();
    cached.close();
  });

  it("keeps at most MAX_STATEMENTS per connection, evicting the least recently used", () => {
    installStatementCache();
    const db = new Database(":memory:");
    const text = (i: number) => `select ${i} as n`;
    const before = { ...statementCacheStats };
    for (let i = 0; i <= MAX_STATEMENTS; i++) db.prepare(text(i)).all();
    expect(delta(before)).toEqual({ hits: 0, misses: MAX_STATEMENTS + 1 });
    // The newest are still held; the first one was evicted and is prepared again.
    db.prepare(text(MAX_STATEMENTS)).all();
    expect(delta(before)).toEqual({ hits: 1, misses: MAX_STATEMENTS + 1 });
    expect(db.prepare(text(0)).all()).toEqual([{ n: 0 }]);
    expect(delta(before)).toEqual({ hits: 1, misses: MAX_STATEMENTS + 2 });
    db.close();
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
      const shape = (r: Awaited<ReturnType<typeof fresh.execute>>) => [r.rowsAffected, r.lastInsertRowid, r.columns, r.rows.map((row) => ({ ...row }))];
      expect(results.map(shape)).toEqual(expected.map(shape));
      expect(results.at(-1)!.rows.map((r) => r.v)).toEqual(Array(5).fill(2 ** 40));
      fresh.close();
      cached.close();
    } finally {
      Object.assign(proto, original);
    }
  });
});
