/**
 * The Hrana test server's `rows_read` / `rows_written` (test/support/turso-rows.ts) count as Turso's
 * billing documentation says (docs.turso.tech/billing-details): a table row inserted is one row
 * written however many indexes it updates; a point lookup through an index reads the row it finds,
 * a query without a supporting index reads every row of the table; an update reads and writes each
 * row it changes, and reads the whole table when no index finds them.
 */
import { createClient, type Client } from "@libsql/client/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHranaServer, type HranaServer } from "../support/hrana-server.ts";

let server: HranaServer;
let client: Client;

/** The rows_read / rows_written one statement reported, straight from the pipeline's answer. */
async function counted(sql: string, args: (string | number)[] = []) {
  const res = await fetch(`${server.url}/v2/pipeline`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      requests: [
        {
          type: "execute",
          stmt: {
            sql,
            args: args.map((a) => (typeof a === "number" ? { type: "integer", value: String(a) } : { type: "text", value: a })),
          },
        },
        { type: "close" },
      ],
    }),
  });
  const body = (await res.json()) as { results: { response: { result: { rows_read: number; rows_written: number } } }[] };
  const { rows_read, rows_written } = body.results[0]!.response.result;
  return { read: rows_read, written: rows_written };
}

beforeAll(async () => {
  server = await startHranaServer();
  client = createClient({ url: server.url });
  await client.batch([
    "create table items (id integer primary key, name text not null, shelf integer not null)",
    "create index items_shelf on items (shelf)",
  ]);
  for (let i = 0; i < 100; i++) await client.execute({ sql: "insert into items (name, shelf) values (?, ?)", args: [`item-${i}`, i % 10] });
});
afterAll(async () => {
  client?.close();
  await server?.close();
});

describe("rows read and written as Turso bills them", () => {
  it("an insert into a table with an index writes one row and reads none", async () => {
    expect(await counted("insert into items (name, shelf) values (?, ?)", ["extra", 3])).toEqual({ read: 0, written: 1 });
    expect(await counted("delete from items where name = 'extra'")).toEqual({ read: 101, written: 1 });
  });

  it("a point lookup reads its row; a query on an unindexed column reads the table", async () => {
    expect(await counted("select * from items where id = ?", [42])).toEqual({ read: 1, written: 0 });
    expect(await counted("select * from items where name = ?", ["item-42"])).toEqual({ read: 100, written: 0 });
    expect(await counted("select * from items where shelf = ?", [4])).toEqual({ read: 10, written: 0 });
  });

  it("an update reads and writes each row it changes, the whole table without an index", async () => {
    expect(await counted("update items set name = name || '!' where shelf = ?", [7])).toEqual({ read: 10, written: 10 });
    expect(await counted("update items set shelf = 11 where name = ?", ["item-5"])).toEqual({ read: 100, written: 1 });
  });

  it("sums them per SQL text", () => {
    const lookup = server.rows.get("select * from items where id = ?");
    expect(lookup).toEqual({ read: 1, written: 0, statements: 1 });
  });
});
