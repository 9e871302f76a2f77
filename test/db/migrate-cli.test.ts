/**
 * `npm run db:migrate` (db/migrate-cli.ts) as a child process, as an operator runs it before a
 * Worker deploy: against Turso played by the Hrana test server, and against URLs that cannot
 * work. Every failure is one line on stderr naming the problem and exit code 1, no stack trace,
 * and nothing applied; a good run applies every migration once.
 */
import { createClient } from "@libsql/client/web";
import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client.ts";
import { schemaStatus } from "../../db/schema-version.ts";
import journal from "../../db/migrations/meta/_journal.json";
import { runStart, type Exited } from "../security/start-process.ts";
import { startHranaServer, type HranaServer } from "../support/hrana-server.ts";

const TOKEN = "turso-migrate-token";
const ALL = journal.entries.map((e) => e.tag);
const servers: HranaServer[] = [];
let closedPort: number;

beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((ready) => probe.listen(0, "127.0.0.1", ready));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((done) => probe.close(done));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function turso() {
  const server = await startHranaServer({ authToken: TOKEN });
  servers.push(server);
  const client = createClient({ url: server.url, authToken: TOKEN });
  const tables = async () =>
    (await client.execute("select name from sqlite_master where type = 'table' order by name")).rows.map((r) => String(r.name));
  return { url: server.url, client, tables };
}

const migrate = (vars: Record<string, string>) => runStart(vars, { script: "db/migrate-cli.ts", timeoutMs: 90_000 });

function expectOneLineRefusal(exited: Exited, message: RegExp) {
  expect(exited.code, exited.stderr).toBe(1);
  const lines = exited.stderr.trim().split("\n");
  expect(lines, exited.stderr).toHaveLength(1);
  expect(exited.stderr).not.toContain("    at ");
  expect(lines[0]).toMatch(message);
}

describe("npm run db:migrate", { timeout: 120_000 }, () => {
  it.concurrent.each([
    ["no DATABASE_URL", {}, /^Configuration error: DATABASE_URL is not set: name the database to migrate/],
    [
      "a postgres:// DATABASE_URL",
      { DATABASE_URL: "postgres://user@db.example/fleet" },
      /^Configuration error: DATABASE_URL has the unsupported scheme postgres:\/\//,
    ],
    ["a relative path as DATABASE_URL", { DATABASE_URL: "./fleet.db" }, /^Configuration error: DATABASE_URL is not a libSQL URL/],
  ])("refuses %s in one line", async (_name, vars, message) => {
    expectOneLineRefusal(await migrate(vars), message);
  });

  it.concurrent("refuses a server that does not answer in one line", async () => {
    expectOneLineRefusal(
      await migrate({ DATABASE_URL: `http://127.0.0.1:${closedPort}` }),
      /^Configuration error: DATABASE_URL is unreachable after 3 attempts: /,
    );
  });

  it.concurrent("refuses a wrong auth token in one line and applies nothing", async () => {
    const db = await turso();
    const exited = await migrate({ DATABASE_URL: db.url, DATABASE_AUTH_TOKEN: "not-the-token" });
    expectOneLineRefusal(
      exited,
      /^Configuration error: DATABASE_URL refused the credentials \(set or fix DATABASE_AUTH_TOKEN\): Unauthorized/,
    );
    expect(await db.tables()).toEqual([]);
  });

  it.concurrent("names the migration that fails, with SQLite's words, and applies none", async () => {
    const db = await turso();
    // A database something else already uses: the second migration's CREATE TABLE operators
    // collides, after every statement of the first one ran (and was rolled back with it).
    await db.client.execute("create table operators (id integer primary key)");
    const exited = await migrate({ DATABASE_URL: db.url, DATABASE_AUTH_TOKEN: TOKEN });
    expectOneLineRefusal(
      exited,
      new RegExp(
        `^db:migrate failed: migration ${ALL[1]} did not apply to ${db.url}: .*table .?operators.? already exists \\(nothing was applied`,
      ),
    );
    // drizzle creates its (empty) bookkeeping table before the migrations' transaction.
    expect(await db.tables()).toEqual(["__drizzle_migrations", "operators"]);
    expect((await db.client.execute("select count(*) as n from __drizzle_migrations")).rows[0]!.n).toBe(0);
  });

  it.concurrent("applies every migration once, then has nothing to apply", async () => {
    const db = await turso();
    const first = await migrate({ DATABASE_URL: db.url, DATABASE_AUTH_TOKEN: TOKEN });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(`Applied ${ALL.join(", ")} to ${db.url}`);
    expect(await schemaStatus(openDatabase(db.client))).toEqual({ state: "current" });
    const again = await migrate({ DATABASE_URL: db.url, DATABASE_AUTH_TOKEN: TOKEN });
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`${db.url} is already migrated (${ALL.at(-1)}): nothing to apply`);
  });
});
