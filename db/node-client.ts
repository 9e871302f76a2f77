/**
 * Node's libSQL client: an embedded file (its directory created) or `:memory:`, or a remote URL.
 *
 * For a `file:` database the settings below hold on its connection:
 * - **One connection**. libSQL's embedded calls are synchronous, so a pool never runs two
 *   statements at once in this process; @libsql/client's opens a new connection whenever two
 *   calls start in the same tick, and per-connection PRAGMAs set after opening would miss it. With
 *   one connection, set up as it opens, the PRAGMAs below reach every statement.
 * - **Busy timeout** (`timeout`, applied by the driver when it opens a connection): another
 *   writer on the same file (the sqlite3 CLI, a backup, `db:migrate`, a second process) makes a
 *   statement wait up to BUSY_TIMEOUT_MS for the lock instead of failing at once with SQLITE_BUSY.
 * - **WAL** (persistent in the file): readers never block the writer and a commit appends to the
 *   log instead of rewriting pages.
 * - **synchronous = FULL** by default: every COMMIT fsyncs the log, so an accepted event survives
 *   a power loss. Group commit (db/group-commit.ts) shares one fsync among the requests that
 *   arrive together, which keeps FULL's cost a fraction of an ingest (bench/RESULTS.md).
 *   `DATABASE_SYNC=normal` opts out: in WAL mode a commit is then durable against a crash of the
 *   process (the log is in the OS's hands when COMMIT returns) but the last commits before a
 *   power loss can be lost; the log is fsynced at checkpoints. The Node host runs the checkpoints
 *   themselves on a worker thread (functions/host/wal-checkpointer.ts).
 * - **cache_size** 16 MiB (the default 2 MiB stops holding the hot indexes once history grows).
 * - **Prepared statements kept** (db/statement-cache.ts): @libsql/client would make the driver
 *   parse and plan every statement again on each call, so embedded databases (and `:memory:`)
 *   get our own client over one connection (db/embedded-client.ts); remote URLs get @libsql/client.
 */
import { createClient, type Client } from "@libsql/client";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { EmbeddedClient } from "./embedded-client.ts";

export const BUSY_TIMEOUT_MS = 5000;
const CACHE_KIB = 16 * 1024;

export type DatabaseSync = "full" | "normal";

/** The PRAGMAs every connection to an embedded file gets (the busy timeout comes with `timeout`). */
export function filePragmas(sync: DatabaseSync = "full"): string[] {
  return [
    "PRAGMA journal_mode = WAL",
    `PRAGMA synchronous = ${sync === "normal" ? "NORMAL" : "FULL"}`,
    `PRAGMA cache_size = -${CACHE_KIB}`,
  ];
}

/** The file of a `file:` URL; null for a remote database. */
export function embeddedPath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  return url.startsWith("file://") ? fileURLToPath(url) : url.slice("file:".length);
}

export async function createNodeClient(url: string, authToken?: string, sync: DatabaseSync = "full"): Promise<Client> {
  if (url === ":memory:") return new EmbeddedClient(":memory:");
  const path = embeddedPath(url);
  if (path === null) return createClient({ url, authToken });
  mkdirSync(dirname(path), { recursive: true });
  return new EmbeddedClient(path, { timeout: BUSY_TIMEOUT_MS, setup: filePragmas(sync) });
}
