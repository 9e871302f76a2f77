/**
 * Node start-up checks of DATABASE_URL, each failing as one ConfigError line instead of a stack
 * trace: a `file:` database whose file or directory cannot be written; a remote database that
 * does not answer (retried briefly) or refuses the credentials; and, once migrated, a database
 * that does not accept a write. The remote probe and the one-line wording of a failure are
 * db/database-probe.ts's, shared with `npm run db:migrate`.
 */
import { constants, accessSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../../runtime/config.ts";

export { databaseFailure, probeDatabase } from "../../db/database-probe.ts";

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
