/**
 * The embedded database's settings hold on every connection (synchronous FULL by default, so an
 * accepted event survives power loss; NORMAL with DATABASE_SYNC=normal), and another writer on the same file
 * makes requests wait instead of fail: a child process holds the write lock for 2 s while the Node
 * host receives concurrent webhooks and chat messages, and every one of them succeeds.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@libsql/client";
import { createNodeClient, BUSY_TIMEOUT_MS } from "../../db/node-client.ts";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { signedWebhook } from "../support/signed-webhook.ts";

const hosts: NodeHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
});

const tempDb = () => join(mkdtempSync(join(tmpdir(), "fw-sqlite-")), "fleetwarden.db");

/** Another process that takes the write lock, says so, holds it for `holdMs`, then commits. */
function holdWriteLock(path: string, holdMs: number) {
  const script = `
    import Database from "libsql";
    const db = new Database(${JSON.stringify(path)});
    db.exec("BEGIN IMMEDIATE");
    db.exec("INSERT INTO breakers (name, failures, updated_at) VALUES ('lock-holder', 0, 0)");
    console.log("locked");
    setTimeout(() => { db.exec("COMMIT"); console.log("committed"); db.close(); }, ${holdMs});`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: process.cwd(),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const said = (word: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => lines.includes(word) && resolve();
      child.stdout.on("data", (chunk: Buffer) => {
        lines.push(...chunk.toString().split("\n").filter(Boolean));
        check();
      });
      child.on("exit", (code) => (lines.includes(word) ? resolve() : reject(new Error(`lock holder exited ${code} before "${word}"`))));
    });
  return { locked: said("locked"), committed: said("committed"), exited: new Promise((r) => child.on("exit", r)) };
}

describe("embedded SQLite settings", () => {
  it("every connection of the client has WAL, synchronous FULL, the busy timeout and the cache size", async () => {
    const client = await createNodeClient(`file:${tempDb()}`);
    const first = (rows: Awaited<ReturnType<typeof client.execute>>) => Object.values(rows.rows[0]!)[0];
    // Calls started in the same tick: a pooled client opens a new connection for each of them.
    const timeouts = await Promise.all(Array.from({ length: 4 }, () => client.execute("PRAGMA busy_timeout")));
    expect(timeouts.map((rs) => Number(first(rs)))).toEqual(Array(4).fill(BUSY_TIMEOUT_MS));
    const [mode, sync, cache] = await Promise.all(
      ["PRAGMA journal_mode", "PRAGMA synchronous", "PRAGMA cache_size"].map((p) => client.execute(p)),
    );
    expect(first(mode!)).toBe("wal");
    expect(Number(first(sync!))).toBe(2); // FULL: every commit fsyncs the log
    expect(Number(first(cache!))).toBe(-16384);
    client.close();
  });

  it("the Node host's connection is FULL by default and NORMAL with DATABASE_SYNC=normal", async () => {
    const syncOf = async (extra: Record<string, string>) => {
      let seen: Client | undefined;
      const host = await startNodeHost(
        {
          PORT: "0",
          DATABASE_URL: `file:${tempDb()}`,
          ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
          SIMULATOR_FAILURE_RATE: "0",
          ...extra,
        },
        { log: silentLogger, cronIntervalMs: 3_600_000, instrumentClient: (c) => (seen = c) },
      );
      hosts.push(host);
      const rs = await seen!.execute("PRAGMA synchronous");
      return Number(Object.values(rs.rows[0]!)[0]);
    };
    expect(await syncOf({})).toBe(2);
    expect(await syncOf({ DATABASE_SYNC: "normal" })).toBe(1);
  });

  it("requests succeed while another process holds the write lock for 2 s", async () => {
    const path = tempDb();
    const host = await startNodeHost(
      {
        PORT: "0",
        DATABASE_URL: `file:${path}`,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
        SIMULATOR_FAILURE_RATE: "0",
      },
      { log: silentLogger, cronIntervalMs: 3_600_000 },
    );
    hosts.push(host);
    const holder = holdWriteLock(path, 2000);
    await holder.locked;
    const requests = [
      ...Array.from({ length: 8 }, (_, i) =>
        fetch(`${host.url}/webhooks/default/instances`, signedWebhook(`lock_${i}`, { instanceId: `sim-${i}`, state: "exited" })),
      ),
      ...Array.from({ length: 4 }, (_, i) =>
        fetch(`${host.url}/api/agents/default/messages`, {
          method: "POST",
          headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" },
          body: JSON.stringify({ text: `message ${i}` }),
        }),
      ),
    ];
    const statuses = (await Promise.all(requests)).map((r) => r.status);
    await holder.committed;
    await holder.exited;
    expect(statuses).toEqual(Array(12).fill(202));

    const client = await createNodeClient(`file:${path}`);
    const stored = await client.execute("select count(*) as n from events where dedup_key like 'webhook:lock_%' or source = 'human'");
    expect(Number(stored.rows[0]!.n)).toBe(12);
    const held = await client.execute("select count(*) as n from breakers where name = 'lock-holder'");
    expect(Number(held.rows[0]!.n)).toBe(1);
    client.close();
  });
});
