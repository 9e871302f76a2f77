import { createClient, type Client } from "@libsql/client/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHranaServer, type HranaServer } from "../support/hrana-server.ts";

let server: HranaServer;
let client: Client;
const AUTH = "hrana-test-token";

beforeAll(async () => {
  server = await startHranaServer({ authToken: AUTH });
  client = createClient({ url: server.url, authToken: AUTH });
  await client.execute("create table items (id integer primary key, name text not null unique, price real)");
});
afterAll(async () => {
  client?.close();
  await server?.close();
});

/** A raw pipeline request, for what the JS client never sends. */
async function pipeline(path: string, body: unknown, token = AUTH) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

describe("@libsql/client/web against the Hrana test server", () => {
  it("executes with arguments and reads typed values back", async () => {
    const inserted = await client.execute({ sql: "insert into items (name, price) values (?, ?)", args: ["bolt", 1.25] });
    expect(inserted.rowsAffected).toBe(1);
    expect(Number(inserted.lastInsertRowid)).toBeGreaterThan(0);
    const read = await client.execute({ sql: "select id, name, price from items where name = :name", args: { name: "bolt" } });
    expect(read.columns).toEqual(["id", "name", "price"]);
    expect(read.columnTypes).toEqual(["INTEGER", "TEXT", "REAL"]);
    expect(read.rows[0]).toMatchObject({ name: "bolt", price: 1.25 });
  });

  it("answers RETURNING rows", async () => {
    const res = await client.execute({ sql: "insert into items (name, price) values (?, ?) returning id, name", args: ["nut", 0.5] });
    expect(res.rows).toHaveLength(1);
    expect(res.rows[0]!.name).toBe("nut");
    expect(res.rowsAffected).toBe(1);
  });

  it("a batch is one transaction: all its statements apply together", async () => {
    const results = await client.batch(
      [
        { sql: "insert into items (name) values (?)", args: ["washer"] },
        { sql: "update items set price = 2 where name = ? returning price", args: ["washer"] },
      ],
      "write",
    );
    expect(results[1]!.rows[0]!.price).toBe(2);
    expect((await client.execute("select count(*) as n from items where name = 'washer'")).rows[0]!.n).toBe(1);
  });

  it("a failing step rolls the whole batch back", async () => {
    await expect(
      client.batch(
        [
          { sql: "insert into items (name) values (?)", args: ["gear"] },
          { sql: "insert into items (name) values (?)", args: ["bolt"] }, // unique violation
        ],
        "write",
      ),
    ).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT" });
    expect((await client.execute("select count(*) as n from items where name = 'gear'")).rows[0]!.n).toBe(0);
  });

  it("an interactive transaction keeps its stream (baton) across requests, and rollback undoes it", async () => {
    const tx = await client.transaction("write");
    await tx.execute({ sql: "insert into items (name) values (?)", args: ["spring"] });
    expect((await tx.execute("select count(*) as n from items where name = 'spring'")).rows[0]!.n).toBe(1);
    await tx.rollback();
    tx.close();
    expect((await client.execute("select count(*) as n from items where name = 'spring'")).rows[0]!.n).toBe(0);
  });

  it("runs concurrent pipelines on separate streams without mixing their results", async () => {
    const names = Array.from({ length: 20 }, (_, i) => `part-${i}`);
    const results = await Promise.all(
      names.map((name) => client.execute({ sql: "insert into items (name) values (?) returning name", args: [name] })),
    );
    expect(results.map((r) => r.rows[0]!.name)).toEqual(names);
    expect((await client.execute("select count(*) as n from items where name like 'part-%'")).rows[0]!.n).toBe(20);
    expect(server.openStreams()).toBe(0); // every one-shot stream was closed
  });

  it("executes a sequence (executeMultiple) and stops at the first failure", async () => {
    await client.executeMultiple("create table seq_a (x); insert into seq_a values (1); insert into seq_a values (2);");
    expect((await client.execute("select count(*) as n from seq_a")).rows[0]!.n).toBe(2);
    await expect(
      client.executeMultiple("insert into seq_a values (3); insert into missing_table values (1); insert into seq_a values (4);"),
    ).rejects.toThrow(/no such table/);
    expect((await client.execute("select count(*) as n from seq_a")).rows[0]!.n).toBe(3);
  });
});

describe("the protocol as the spec answers it", () => {
  it("v3 batch conditions: ok/error/not/and/or and is_autocommit steer which steps run", async () => {
    const res = await pipeline("/v3/pipeline", {
      baton: null,
      requests: [
        {
          type: "batch",
          batch: {
            steps: [
              { stmt: { sql: "begin" } },
              { condition: { type: "ok", step: 0 }, stmt: { sql: "insert into items (name) values ('cond-a')" } },
              { condition: { type: "ok", step: 1 }, stmt: { sql: "insert into items (name) values ('bolt')" } }, // fails
              { condition: { type: "error", step: 2 }, stmt: { sql: "select 'saw error' as s" } },
              { condition: { type: "not", cond: { type: "is_autocommit" } }, stmt: { sql: "select 'in transaction' as s" } },
              {
                condition: {
                  type: "and",
                  conds: [
                    { type: "ok", step: 1 },
                    { type: "ok", step: 2 },
                  ],
                },
                stmt: { sql: "select 'never' as s" },
              },
              {
                condition: {
                  type: "or",
                  conds: [
                    { type: "ok", step: 5 },
                    { type: "error", step: 2 },
                  ],
                },
                stmt: { sql: "rollback" },
              },
              { condition: { type: "is_autocommit" }, stmt: { sql: "select count(*) from items where name = 'cond-a'" } },
            ],
          },
        },
        { type: "close" },
      ],
    });
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.baton).toBeNull();
    const { step_results, step_errors } = body.results[0].response.result;
    expect(step_errors[2]).toMatchObject({ code: "SQLITE_CONSTRAINT" });
    expect(step_results[2]).toBeNull();
    expect(step_results[3].rows).toEqual([[{ type: "text", value: "saw error" }]]);
    expect(step_results[4].rows).toEqual([[{ type: "text", value: "in transaction" }]]);
    expect(step_results[5]).toBeNull(); // skipped: both null
    expect(step_errors[5]).toBeNull();
    expect(step_results[7].rows).toEqual([[{ type: "integer", value: "0" }]]); // rolled back
  });

  it("store_sql / close_sql, get_autocommit and want_rows on one stream, carried by batons", async () => {
    const first = (
      await pipeline("/v3/pipeline", {
        baton: null,
        requests: [
          { type: "store_sql", sql_id: 7, sql: "select name from items where name = ?" },
          { type: "execute", stmt: { sql_id: 7, args: [{ type: "text", value: "bolt" }] } },
          { type: "execute", stmt: { sql: "begin" } },
          { type: "get_autocommit" },
        ],
      })
    ).json();
    expect(first.results[1].response.result.rows).toEqual([[{ type: "text", value: "bolt" }]]);
    expect(first.results[3].response).toEqual({ type: "get_autocommit", is_autocommit: false });
    expect(first.baton).toEqual(expect.any(String));

    const second = (
      await pipeline("/v3/pipeline", {
        baton: first.baton,
        requests: [
          { type: "execute", stmt: { sql_id: 7, args: [{ type: "text", value: "nut" }], want_rows: false } },
          { type: "execute", stmt: { sql: "rollback" } },
          { type: "get_autocommit" },
          { type: "close_sql", sql_id: 7 },
          { type: "close" },
        ],
      })
    ).json();
    expect(second.results[0].response.result.rows).toEqual([]);
    expect(second.results[2].response.is_autocommit).toBe(true);
    expect(second.baton).toBeNull();
    expect(second.baton).not.toBe(first.baton);
  });

  it("statement errors are results, not failed requests: SQLite, arguments, statement count", async () => {
    const res = await pipeline("/v2/pipeline", {
      baton: null,
      requests: [
        { type: "execute", stmt: { sql: "select * from no_such_table" } },
        { type: "execute", stmt: { sql: "select ?, ?", args: [{ type: "integer", value: "1" }] } },
        { type: "execute", stmt: { sql: "select 1; select 2" } },
        { type: "execute", stmt: { sql: "  -- nothing\n" } },
        { type: "execute", stmt: { sql: "select :a", args: [{ type: "null" }], named_args: [{ name: "a", value: { type: "null" } }] } },
        {
          type: "execute",
          stmt: { sql: "select :a as a", named_args: [{ name: "a", value: { type: "integer", value: "9007199254740993" } }] },
        },
        { type: "close" },
      ],
    });
    expect(res.status).toBe(200);
    const results = res.json().results;
    expect(results[0]).toMatchObject({ type: "error", error: { code: "SQLITE_ERROR", message: expect.stringMatching(/no such table/) } });
    expect(results[1]).toMatchObject({ type: "error", error: { code: "ARGS_INVALID" } });
    expect(results[2]).toMatchObject({ type: "error", error: { code: "SQL_MANY_STATEMENTS" } });
    expect(results[3]).toMatchObject({ type: "error", error: { code: "SQL_NO_STATEMENT" } });
    expect(results[4]).toMatchObject({ type: "error", error: { code: "ARGS_BOTH_POSITIONAL_AND_NAMED" } });
    expect(results[5].response.result.rows).toEqual([[{ type: "integer", value: "9007199254740993" }]]);
  });

  it("refuses baton misuse: reused, forged, after close — and the stream is gone after a protocol error", async () => {
    const opened = (await pipeline("/v2/pipeline", { baton: null, requests: [{ type: "execute", stmt: { sql: "select 1" } }] })).json();
    const next = (await pipeline("/v2/pipeline", { baton: opened.baton, requests: [] })).json();
    const reused = await pipeline("/v2/pipeline", { baton: opened.baton, requests: [] });
    expect(reused.status).toBe(400);
    expect(reused.text).toMatch(/already been used/);

    const forged = await pipeline("/v2/pipeline", { baton: Buffer.alloc(48, 1).toString("base64").replace(/=+$/, ""), requests: [] });
    expect(forged.status).toBe(400);
    expect(forged.text).toMatch(/invalid baton/);

    // The reuse above was a protocol error on another request; the real stream still answers.
    const closed = (await pipeline("/v2/pipeline", { baton: next.baton, requests: [{ type: "close" }] })).json();
    expect(closed.baton).toBeNull();
    const afterClose = await pipeline("/v2/pipeline", { baton: next.baton, requests: [] });
    expect(afterClose.status).toBe(400);

    const useClosed = await pipeline("/v2/pipeline", {
      baton: null,
      requests: [{ type: "close" }, { type: "execute", stmt: { sql: "select 1" } }],
    });
    expect(useClosed.status).toBe(400);
    expect(useClosed.text).toMatch(/closed/);
  });

  it("refuses protocol violations with 400: bad JSON, sql and sql_id, unknown sql_id, duplicate store, later-step condition, v3 features on v2", async () => {
    const bad = await fetch(`${server.url}/v2/pipeline`, { method: "POST", headers: { Authorization: `Bearer ${AUTH}` }, body: "{" });
    expect(bad.status).toBe(400);
    const cases: unknown[][] = [
      [{ type: "execute", stmt: { sql: "select 1", sql_id: 1 } }],
      [{ type: "execute", stmt: {} }],
      [{ type: "execute", stmt: { sql_id: 99 } }],
      [
        { type: "store_sql", sql_id: 1, sql: "select 1" },
        { type: "store_sql", sql_id: 1, sql: "select 2" },
      ],
      [{ type: "batch", batch: { steps: [{ condition: { type: "ok", step: 0 }, stmt: { sql: "select 1" } }] } }],
      [{ type: "get_autocommit" }],
      [{ type: "batch", batch: { steps: [{ condition: { type: "is_autocommit" }, stmt: { sql: "select 1" } }] } }],
      [{ type: "describe", sql: "select 1" }],
      [{ type: "execute", stmt: { sql: "select ?", args: [{ type: "integer", value: 1 }] } }],
    ];
    for (const requests of cases) {
      const res = await pipeline("/v2/pipeline", { baton: null, requests });
      expect(res.status, JSON.stringify(requests)).toBe(400);
    }
    // A batch refused for a protocol error ran none of its steps.
    await pipeline("/v2/pipeline", {
      baton: null,
      requests: [
        { type: "batch", batch: { steps: [{ stmt: { sql: "insert into items (name) values ('half')" } }, { stmt: { sql_id: 5 } }] } },
      ],
    });
    expect((await client.execute("select count(*) as n from items where name = 'half'")).rows[0]!.n).toBe(0);
  });

  it("refuses a missing or wrong auth token with 401, and unknown paths with 404", async () => {
    expect((await pipeline("/v2/pipeline", { baton: null, requests: [] }, "wrong")).status).toBe(401);
    const anonymous = await fetch(`${server.url}/v2/pipeline`, { method: "POST", body: JSON.stringify({ baton: null, requests: [] }) });
    expect(anonymous.status).toBe(401);
    expect((await fetch(`${server.url}/v3-protobuf`, { headers: { Authorization: `Bearer ${AUTH}` } })).status).toBe(404);
    expect((await fetch(`${server.url}/v3`, { headers: { Authorization: `Bearer ${AUTH}` } })).status).toBe(200);
  });

  it("expires an idle stream, rolling back the transaction it left open", async () => {
    const short = await startHranaServer({ path: server.path, streamIdleMs: 1 });
    try {
      const call = (body: unknown) =>
        fetch(`${short.url}/v2/pipeline`, { method: "POST", body: JSON.stringify(body) }).then(async (r) => ({
          status: r.status,
          text: await r.text(),
        }));
      const opened = JSON.parse(
        (
          await call({
            baton: null,
            requests: [
              { type: "execute", stmt: { sql: "begin" } },
              { type: "execute", stmt: { sql: "insert into items (name) values ('idle')" } },
            ],
          })
        ).text,
      );
      await new Promise((r) => setTimeout(r, 20));
      await call({ baton: null, requests: [{ type: "close" }] }); // any request sweeps idle streams
      const late = await call({ baton: opened.baton, requests: [] });
      expect(late.status).toBe(400);
      expect(JSON.parse(late.text)).toMatchObject({ code: "STREAM_EXPIRED" });
      expect((await client.execute("select count(*) as n from items where name = 'idle'")).rows[0]!.n).toBe(0);
    } finally {
      await short.close();
    }
  });
});
