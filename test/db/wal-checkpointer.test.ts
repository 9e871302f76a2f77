/**
 * The Node host's WAL checkpoints on a worker thread (functions/host/wal-checkpointer.ts): the
 * thread copies committed pages into the database file while the host's connection only
 * checkpoints at the backstop; the backstop bounds the log when the thread does not keep up; a
 * thread that fails is logged once and the connection goes back to SQLite's default; after stop
 * nothing is checkpointed by the thread.
 */
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@libsql/client";
import { createNodeClient } from "../../db/node-client.ts";
import { BACKSTOP_PAGES, SQLITE_DEFAULT_PAGES, WalCheckpointer } from "../../functions/host/wal-checkpointer.ts";
import type { Logger } from "../../runtime/log.ts";
import { waitFor } from "../support/child-process-waits.ts";

const PAGE = 4096;
const opened: { client: Client; checkpointer: WalCheckpointer }[] = [];
afterEach(async () => {
  for (const { client, checkpointer } of opened.splice(0)) {
    await checkpointer.stop();
    client.close();
  }
});

function recordingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => {}, error: (message) => errors.push(message) };
}

async function open(options: Parameters<typeof WalCheckpointer.start>[3], log: Logger = recordingLog()) {
  const path = join(mkdtempSync(join(tmpdir(), "fw-wal-")), "t.db");
  const client = await createNodeClient(`file:${path}`);
  await client.execute("create table blobs (id integer primary key, body blob not null)");
  const checkpointer = await WalCheckpointer.start(path, client, log, options);
  opened.push({ client, checkpointer });
  return { path, client, checkpointer };
}

/** Commits `pages` pages of data, one small transaction at a time, as ingest does. */
async function write(client: Client, pages: number): Promise<void> {
  for (let i = 0; i < pages / 4; i++)
    await client.execute({ sql: "insert into blobs (body) values (randomblob(?))", args: [4 * PAGE - 200] });
}

const setting = async (client: Client) => Number(Object.values((await client.execute("PRAGMA wal_autocheckpoint")).rows[0]!)[0]);
const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);

describe("WAL checkpoints on a worker thread", () => {
  it("copies committed pages into the database file while the host's connection checkpoints only at the backstop", async () => {
    const { path, client, checkpointer } = await open({ intervalMs: 20 });
    expect(await setting(client)).toBe(BACKSTOP_PAGES);
    await write(client, 3 * SQLITE_DEFAULT_PAGES);
    // Past SQLite's default the host's connection would have checkpointed itself and rewound the
    // log; with the backstop it did not, and the pages reach the file through the thread.
    expect(size(`${path}-wal`)).toBeGreaterThan(3 * SQLITE_DEFAULT_PAGES * PAGE);
    // The thread copies the pages, then reports it.
    await waitFor(
      "the thread's checkpoint",
      async () => (size(path) > 3 * SQLITE_DEFAULT_PAGES * PAGE && checkpointer.stats.checkpoints > 0 ? true : undefined),
      10_000,
    );
    expect(checkpointer.alive).toBe(true);
  });

  it("bounds the log by the backstop when the thread does not keep up", async () => {
    const { path, client, checkpointer } = await open({ intervalMs: 3_600_000, backstopPages: 200 });
    // A thread still opening its connection reads the file; a backstop checkpoint meanwhile could
    // not rewind the log, and the file keeps the size the log reached. Measure from when it is open.
    await checkpointer.ready;
    await write(client, 2000);
    expect(checkpointer.stats.checkpoints).toBe(0);
    // Rewound after each backstop checkpoint: the backstop plus the transaction that crossed it.
    // That transaction writes its 4 overflow pages, the leaf, and when the leaf splits a new leaf,
    // its parent and page 1: up to 16 frames bounds it.
    expect(size(`${path}-wal`)).toBeLessThan((200 + 16) * (PAGE + 24) + 32);
    expect(size(path)).toBeGreaterThan(1500 * PAGE);
  });

  it("a thread that fails is logged once and the connection checkpoints as SQLite does by default", async () => {
    const log = recordingLog();
    const failing = new URL(`data:text/javascript,${encodeURIComponent('throw new Error("no checkpoints today")')}`);
    const { client, checkpointer } = await open({ script: failing }, log);
    await waitFor(
      "SQLite's default checkpoint",
      async () => (!checkpointer.alive && (await setting(client)) === SQLITE_DEFAULT_PAGES ? true : undefined),
      10_000,
    );
    expect(log.errors).toEqual(["the WAL checkpoint thread stopped; commits checkpoint on the event loop from now on"]);
    await write(client, 100);
    expect(log.errors).toHaveLength(1);
  });

  it("stop ends the thread after its connection closed: nothing is checkpointed after it", async () => {
    const { path, client, checkpointer } = await open({ intervalMs: 20 });
    await write(client, 100);
    await checkpointer.stop();
    expect(checkpointer.alive).toBe(false);
    const [checkpoints, fileSize] = [checkpointer.stats.checkpoints, size(path)];
    await write(client, 2000);
    // A live thread on another database checkpoints pages written after these: time enough passed.
    const witness = await open({ intervalMs: 20 });
    await write(witness.client, 100);
    await waitFor("a live thread's checkpoint", async () => (witness.checkpointer.stats.checkpoints > 0 ? true : undefined), 10_000);
    expect([checkpointer.stats.checkpoints, size(path)]).toEqual([checkpoints, fileSize]);
  });
  it("opens only the file the host opened: a file deleted before the thread starts is not re-created", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "fw-wal-")), "t.db");
    const client = await createNodeClient(`file:${path}`);
    await client.execute("create table blobs (id integer primary key, body blob not null)");
    const { dev, ino } = statSync(path);
    unlinkSync(path);
    const log = recordingLog();
    const checkpointer = await WalCheckpointer.start(path, client, log, { opened: { dev, ino } });
    opened.push({ client, checkpointer });
    await checkpointer.ready;
    await waitFor("the thread's refusal", async () => (checkpointer.alive ? undefined : true));
    // Opening the path would have made a new, empty database there ("replaced" instead of "deleted").
    expect(existsSync(path)).toBe(false);
    expect(log.errors).toHaveLength(1);
  });
});
