/**
 * Node start-up checks of DATABASE_URL, each failing as one ConfigError line instead of a stack
 * trace: a `file:` database whose file or directory cannot be written; a remote database that
 * does not answer (retried briefly) or refuses the credentials; and, once migrated, a database
 * that does not accept a write. The remote probe and the one-line wording of a failure are
 * db/database-probe.ts's, shared with `npm run db:migrate`.
 * A file with more than one hard link is refused: SQLite keeps its WAL and lock file per name,
 * so two processes opening the file by two names would each write their own WAL into it (SQLite's
 * "How To Corrupt", multiple links to the same file). Identity is device + inode
 * (databaseFileIdentity), which a symlinked directory does not change.
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
    const { nlink } = statSync(path);
    if (nlink > 1) {
      throw new ConfigError(
        "DATABASE_URL",
        `names ${path}, which has ${nlink} hard links: SQLite keeps a separate WAL per name, so a second host could write the same file through another link; remove the extra links`,
      );
    }
  }
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new ConfigError(
      "DATABASE_URL",
      `names a file in ${dir}, which cannot be created (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  if (!writable(dir))
    throw new ConfigError(
      "DATABASE_URL",
      `names a file in ${dir}, which is not writable (the database needs its -wal and -shm files there)`,
    );
}

/** What identifies a database file whatever name reaches it: its device and inode. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** The identity of the file a `file:` URL names now (symlinks followed); null if remote or absent. */
export function databaseFileIdentity(url: string): FileIdentity | null {
  const path = databaseFilePath(url);
  if (!path) return null;
  try {
    const { dev, ino } = statSync(path);
    return { dev, ino };
  } catch {
    return null;
  }
}
