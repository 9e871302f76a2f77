/**
 * Whether the database file the Node host opened is still the one DATABASE_URL names. SQLite keeps
 * writing to an open file that was deleted or replaced (an unlinked inode), so everything accepted
 * after that is lost at the next start. The identity (device + inode) is captured at open and
 * compared with the path's current one: /healthz answers 503 naming the problem, and the host
 * refuses writes (HTTP requests that could write answer 503; the database client refuses every
 * statement), so nothing is accepted into a file nobody will open again. The write-ahead log beside
 * it (`<file>-wal`) is watched the same way from the first time it is seen: deleted or replaced
 * while open, SQLite keeps appending to the unlinked log and every commit since the last
 * checkpoint is lost at the next start (issue #37 item 8b). One more stat per call.
 */
import { statSync } from "node:fs";
import type { Client } from "@libsql/client";
import { databaseFileIdentity, databaseFilePath, type FileIdentity } from "./database-checks.ts";

export class DatabaseFileWatch {
  constructor(
    private readonly url: string,
    private readonly opened: FileIdentity,
  ) {}

  /** The log's identity from the first time it was seen (SQLite creates it at the first write). */
  private wal: FileIdentity | null = null;

  /** Null while the path still names the opened file and its log; else why not. Two stats per call. */
  problem(): string | null {
    const now = databaseFileIdentity(this.url);
    const path = databaseFilePath(this.url);
    if (!now) return `the database file ${path} was deleted while open; restart the host to open it again (writes are refused until then)`;
    if (now.dev !== this.opened.dev || now.ino !== this.opened.ino)
      return `the database file ${path} was replaced by another file while open; restart the host (writes are refused until then)`;
    return this.walProblem(`${path}-wal`);
  }

  private walProblem(walPath: string): string | null {
    let wal: FileIdentity | null;
    try {
      const { dev, ino } = statSync(walPath);
      wal = { dev, ino };
    } catch {
      wal = null;
    }
    if (!this.wal) {
      this.wal = wal;
      return null;
    }
    const lost = "the commits in it since the last checkpoint are lost at the next start; restart the host (writes are refused until then)";
    if (!wal) return `the database's write-ahead log ${walPath} was deleted while open: ${lost}`;
    if (wal.dev !== this.wal.dev || wal.ino !== this.wal.ino)
      return `the database's write-ahead log ${walPath} was replaced while open: ${lost}`;
    return null;
  }
}

export class DatabaseFileGone extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseFileGone";
  }
}

const STATEMENTS = new Set(["execute", "batch", "transaction", "executeMultiple", "migrate"]);

/** The client, refusing every statement while the watch reports a problem. */
export function watchedClient(inner: Client, watch: DatabaseFileWatch): Client {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      if (typeof prop !== "string" || !STATEMENTS.has(prop)) return value.bind(target);
      return (...args: unknown[]) => {
        const problem = watch.problem();
        if (problem) return Promise.reject(new DatabaseFileGone(problem));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The host's fetch, answering 503 to any request that could write while the file is not the one opened. */
export function refusingWritesWhenGone<A extends unknown[]>(
  fetch: (request: Request, ...rest: A) => Response | Promise<Response>,
  watch: DatabaseFileWatch,
) {
  return (request: Request, ...rest: A): Response | Promise<Response> => {
    if (!READS.has(request.method)) {
      const problem = watch.problem();
      if (problem) return Response.json({ error: problem }, { status: 503 });
    }
    return fetch(request, ...rest);
  };
}
