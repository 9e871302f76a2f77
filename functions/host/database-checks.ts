/**
 * Node start-up checks of DATABASE_URL, each failing as one ConfigError line instead of a stack
 * trace: a `file:` database whose file or directory cannot be written; a remote database that
 * does not answer (retried briefly) or refuses the credentials; and, once migrated, a database
 * that does not accept a write.
 */
import { constants, accessSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@libsql/client";
import { ConfigError } from "../../runtime/config.ts";

const PROBE_ATTEMPTS = 3;
const PROBE_PAUSE_MS = 400;

export function databaseFilePath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  return resolve(url.startsWith("file://") ? fileURLToPath(url) : url.slice("file:".length));
}

const writable = (path: string) => {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

/** A `file:` database: the file (if it exists) and its directory must be writable. */
export function checkDatabaseFile(url: string): void {
  const path = databaseFilePath(url);
  if (!path) return;
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) throw new ConfigError("DATABASE_URL", `names ${path}, which is a directory, not a database file`);
    if (!writable(path)) throw new ConfigError("DATABASE_URL", `names ${path}, which is read-only: fleetwarden must write to its database`);
  }
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new ConfigError("DATABASE_URL", `names a file in ${dir}, which cannot be created (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (!writable(dir)) throw new ConfigError("DATABASE_URL", `names a file in ${dir}, which is not writable (the database needs its -wal and -shm files there)`);
}

function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string } };
  return (e.cause?.message ?? e.message ?? String(err)).split("\n")[0]!.slice(0, 160);
}

/** A remote database must answer; a 401/403 is reported as a credentials problem, at once. */
export async function probeDatabase(client: Client, url: string, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))): Promise<void> {
  let last: unknown;
  for (let attempt = 1; attempt <= PROBE_ATTEMPTS; attempt++) {
    try {
      await client.execute("select 1");
      return;
    } catch (err) {
      last = err;
      if (/\b(401|403)\b|unauthori[sz]ed|forbidden/i.test(describe(err))) {
        throw new ConfigError("DATABASE_URL", `refused the credentials (set or fix DATABASE_AUTH_TOKEN): ${describe(err)}`);
      }
      if (url.startsWith("file:") || url === ":memory:") break;
      if (attempt < PROBE_ATTEMPTS) await sleep(PROBE_PAUSE_MS);
    }
  }
  throw new ConfigError("DATABASE_URL", `is unreachable${url.startsWith("file:") || url === ":memory:" ? "" : ` after ${PROBE_ATTEMPTS} attempts`}: ${describe(last)}`);
}

/** Anything that failed while opening or migrating the database, as one line. */
export function databaseFailure(step: string, err: unknown): ConfigError {
  if (err instanceof ConfigError) return err;
  const text = describe(err);
  if (/readonly|read-only|SQLITE_READONLY|SQLITE_CANTOPEN|permission/i.test(text)) {
    return new ConfigError("DATABASE_URL", `cannot be written (${step}): ${text}`);
  }
  return new ConfigError("DATABASE_URL", `failed while ${step}: ${text}`);
}
