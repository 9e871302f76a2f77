/**
 * The embedded client (db/embedded-client.ts) answers as @libsql/client's own embedded client
 * does: each scenario runs on both, each on a fresh file, and what they return or throw — result
 * sets (columns, types, rows by index and by name, `length`, rowsAffected, lastInsertRowid),
 * values of every kind, errors (class, code, extended code, message, failed statement) — must be
 * the same, along with a few absolute checks so a scenario cannot agree on nothing.
 */
import { describe, expect, it } from "vitest";
import Database from "libsql";
import { createClient, LibsqlBatchError, LibsqlError, type Client, type ResultSet } from "@libsql/client";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedClient } from "../../db/embedded-client.ts";

const tempPath = () => join(mkdtempSync(join(tmpdir(), "fw-embedded-")), "t.db");

function describeResult(rs: ResultSet) {
  return {
    columns: rs.columns,
    columnTypes: rs.columnTypes,
    rowsAffected: rs.rowsAffected,
    lastInsertRowid: rs.lastInsertRowid,
    rows: rs.rows.map((row) => ({
      length: row.length,
      values: Array.prototype.slice.call(row),
      keys: Object.keys(row),
      own: Object.getOwnPropertyNames(row),
      spread: { ...row },
    })),
    json: rs.toJSON(),
  };
}

function describeError(error: unknown) {
  const e = error as Error & { code?: string; extendedCode?: string; rawCode?: number; statementIndex?: number };
  return {
    thrown: e.constructor.name,
    name: e.name,
    message: e.message,
    code: e.code,
    extendedCode: e.extendedCode,
    rawCode: e.rawCode,
    statementIndex: e.statementIndex,
    libsql: e instanceof LibsqlError,
    batch: e instanceof LibsqlBatchError,
  };
}

type Outcome = { value?: unknown; error?: ReturnType<typeof describeError> };
const outcome = (work: () => Promise<unknown>): Promise<Outcome> =>
  work().then(
    (value) => ({
      value: Array.isArray(value)
        ? value.map((v) => (isResultSet(v) ? describeResult(v) : v))
        : isResultSet(value)
          ? describeResult(value)
          : value,
    }),
    (error: unknown) => ({ error: describeError(error) }),
  );
const isResultSet = (v: unknown): v is ResultSet => typeof v === "object" && v !== null && "rows" in v && "columns" in v;

type Step = (client: Client, path: string) => Promise<unknown>;

/** Runs the steps on a fresh database with each client; returns both clients' outcomes, step by step. */
async function onBoth(steps: Step[]) {
  const run = async (open: (path: string) => Client) => {
    const path = tempPath();
    const client = open(path);
    const outcomes = [];
    for (const step of steps) outcomes.push(await outcome(() => step(client, path)));
    client.close();
    return outcomes;
  };
  const ours = await run((path) => new EmbeddedClient(path));
  const theirs = await run((path) => createClient({ url: `file:${path}`, concurrency: 1 }));
  expect(ours).toEqual(theirs);
  return ours;
}

describe("embedded client, side by side with @libsql/client", () => {
  it("values of every kind, in and out, and rows by index and by name", async () => {
    const blob = new Uint8Array([1, 2, 255]).buffer;
    const [, inserted, read, named, duplicate] = await onBoth([
      (c) => c.execute("create table t (i integer, r real, s text, b blob, n numeric, d integer)"),
      (c) => c.execute({ sql: "insert into t values (?, ?, ?, ?, ?, ?)", args: [1, 1.5, "x", blob, null, new Date(1_700_000_000_000)] }),
      (c) => c.execute("select i, r, s, b, n, d, typeof(b) as tb, 2 * i as doubled from t"),
      (c) => c.execute({ sql: "select :k as k, $v as v, @w as w", args: { ":k": 1, $v: "two", "@w": 3n } }),
      (c) => c.execute({ sql: "select ? as a, ? as a, 5 as '0'", args: [true, false] }),
    ]);
    expect(inserted!.value).toMatchObject({ rowsAffected: 1, lastInsertRowid: 1n });
    expect(read!.value).toMatchObject({
      columnTypes: ["INTEGER", "REAL", "TEXT", "BLOB", "numeric", "INTEGER", "", ""],
      rows: [{ spread: { i: 1, s: "x", d: 1_700_000_000_000, tb: "blob" } }],
    });
    expect(named!.value).toMatchObject({ rows: [{ spread: { k: 1, v: "two", w: 3 } }] });
    expect(duplicate!.value).toMatchObject({ rows: [{ length: 3, values: [1, 0, 5], keys: ["a"] }] });
  });

  it("what a write reports: rows affected, the last rowid as a bigint, nothing for RETURNING", async () => {
    const [, , update, returning] = await onBoth([
      (c) => c.execute("create table t (id integer primary key, v integer)"),
      (c) => c.batch(["insert into t (v) values (1)", "insert into t (v) values (2)", ["insert into t (v) values (?)", [3]]]),
      (c) => c.execute("update t set v = v + 1"),
      (c) => c.execute({ sql: "insert into t (v) values (?) returning id, v", args: [9] }),
    ]);
    expect(update!.value).toMatchObject({ rowsAffected: 3, lastInsertRowid: 3n });
    expect(returning!.value).toMatchObject({ rowsAffected: 0, lastInsertRowid: undefined, rows: [{ spread: { id: 4, v: 9 } }] });
  });

  it("refuses the same arguments and results", async () => {
    const outcomes = await onBoth([
      (c) => c.execute("select 9007199254740993 as n"),
      (c) => c.execute({ sql: "select ?", args: [Number.NaN] }),
      (c) => c.execute({ sql: "select ?", args: [undefined as never] }),
      (c) => c.execute({ sql: "select ?", args: [2n ** 64n] }),
    ]);
    expect(outcomes.map((o) => o.error?.thrown)).toEqual(["RangeError", "RangeError", "TypeError", "RangeError"]);
  });

  it("SQLite's errors as LibsqlError: primary code, extended code, message", async () => {
    const [, , unique, syntax, missing] = await onBoth([
      (c) => c.execute("create table t (k text unique)"),
      (c) => c.execute("insert into t values ('a')"),
      (c) => c.execute("insert into t values ('a')"),
      (c) => c.execute("selec 1"),
      (c) => c.execute("select * from missing"),
    ]);
    expect(unique!.error).toMatchObject({ libsql: true, code: "SQLITE_CONSTRAINT", extendedCode: "SQLITE_CONSTRAINT_UNIQUE" });
    expect(syntax!.error).toMatchObject({ code: "SQLITE_ERROR", message: expect.stringMatching(/^SQLITE_ERROR: near "selec"/) });
    expect(missing!.error).toMatchObject({ code: "SQLITE_ERROR", message: expect.stringMatching(/no such table: missing/) });
  });

  it("SQLITE_BUSY when another connection holds the write lock (no busy timeout set)", async () => {
    const holders: Database.Database[] = [];
    const [, busy] = await onBoth([
      (c) => c.execute("create table t (v integer)"),
      async (c, path) => {
        const holder = new Database(path);
        holders.push(holder);
        holder.exec("BEGIN IMMEDIATE");
        try {
          return await c.execute("insert into t values (1)");
        } finally {
          holder.exec("ROLLBACK");
        }
      },
      (c) => c.execute("insert into t values (2)"),
    ]);
    for (const holder of holders) holder.close();
    expect(busy!.error).toMatchObject({ libsql: true, code: "SQLITE_BUSY" });
  });

  it("a batch is one transaction in its mode: a failed statement is named and nothing of the batch stays", async () => {
    const [, failed, count, , unknownMode] = await onBoth([
      (c) => c.execute("create table t (k text unique)"),
      (c) => c.batch(["insert into t values ('a')", "insert into t values ('a')", "insert into t values ('b')"], "write"),
      (c) => c.execute("select count(*) as n from t"),
      (c) => c.batch(["select 1", "insert into t values ('c')"], "read"),
      (c) => c.batch(["select 1"], "sometimes" as never),
    ]);
    expect(failed!.error).toMatchObject({ batch: true, statementIndex: 1, code: "SQLITE_CONSTRAINT" });
    expect(count!.value).toMatchObject({ rows: [{ spread: { n: 0 } }] });
    expect(unknownMode!.error).toMatchObject({ thrown: "RangeError" });
  });

  it("an interactive transaction holds the one connection until it ends", async () => {
    const outcomes = await onBoth([
      (c) => c.execute("create table t (v integer)"),
      async (c) => {
        const tx = await c.transaction("write");
        await tx.execute({ sql: "insert into t values (?)", args: [1] });
        // The code only: @libsql/client's message speaks of in-memory databases and replicas.
        const refused = (await outcome(() => c.execute("select 1"))).error?.code;
        const failedBatch = await outcome(() => tx.batch(["insert into t values (2)", "insert into nowhere values (1)"]));
        await tx.rollback();
        return { refused, failedBatch, closed: tx.closed, afterEnd: await outcome(() => tx.execute("select 1")) };
      },
      async (c) => {
        const tx = await c.transaction();
        await tx.executeMultiple("insert into t values (3); insert into t values (4);");
        await tx.commit();
        return tx.closed;
      },
      async (c) => {
        const tx = await c.transaction("deferred");
        await tx.execute("insert into t values (5)");
        tx.close();
        return (await c.execute("select group_concat(v) as vs from t")).rows[0]!.vs;
      },
    ]);
    expect(outcomes[1]!.value).toMatchObject({
      refused: "TRANSACTION_ACTIVE",
      failedBatch: { error: { batch: true, statementIndex: 1 } },
      closed: true,
      afterEnd: { error: { code: "TRANSACTION_CLOSED" } },
    });
    expect(outcomes[3]!.value).toBe("3,4");
  });

  it("scripts, migrations, closing and reconnecting", async () => {
    const outcomes = await onBoth([
      (c) =>
        c.executeMultiple(
          "create table p (id integer primary key); create table c (p integer references p(id)); pragma foreign_keys = on;",
        ),
      (c) => c.executeMultiple("insert into p values (1); insert into nowhere values (1);"),
      (c) => c.migrate(["insert into c values (7)", "insert into p values (2)"]),
      (c) => c.execute("pragma foreign_keys"),
      (c) => c.migrate(["insert into p values (3)", "insert into p values (3)"]),
      (c) => c.execute("select group_concat(id) as ids from p"),
      async (c) => {
        c.close();
        return { closed: c.closed, after: await outcome(() => c.execute("select 1")) };
      },
      async (c) => {
        c.reconnect();
        return { closed: c.closed, after: await outcome(() => c.execute("select count(*) as n from c")) };
      },
    ]);
    expect(outcomes[1]!.error).toMatchObject({ libsql: true, code: "SQLITE_ERROR" });
    expect(outcomes[4]!.error).toMatchObject({ batch: true, statementIndex: 1 });
    expect(outcomes[5]!.value).toMatchObject({ rows: [{ spread: { ids: "1,2" } }] });
    expect(outcomes[6]!.value).toMatchObject({ closed: true, after: { error: { code: "CLIENT_CLOSED" } } });
    expect(outcomes[7]!.value).toMatchObject({ closed: false, after: { value: { rows: [{ spread: { n: 1 } }] } } });
  });

  it("says what it is as @libsql/client does", async () => {
    const client = new EmbeddedClient(":memory:");
    expect({ protocol: client.protocol, closed: client.closed }).toEqual({ protocol: "file", closed: false });
    expect(await client.sync()).toBeUndefined();
    client.close();
  });
});
