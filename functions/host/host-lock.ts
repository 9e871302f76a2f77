/**
 * One writer per host identity. A Node host's identity is its machine name plus, for a `file:`
 * database, the file's device and inode (so a symlinked directory or another spelling of the path
 * names the same identity; hard links are refused before opening, functions/host/database-checks.ts),
 * else its data directory, so two processes on one database file always share it. On start the host records its pid in `node_hosts`; a second process whose
 * identity is held by a live pid refuses to start with one line naming that pid and since when.
 * A row left by a process that died (kill -9, crash) names a dead pid and is taken over.
 * The identity also marks the leases a host takes, so on start it recovers only its own.
 *
 * The identity names the machine, so two machines sharing one file (containers on one volume)
 * would each hold their own: for a `file:` database the host first takes an OS-level lock file
 * beside it (`<file>.fleetwarden-lock`, created exclusively, holding pid, host name and start),
 * before the database is opened. The holder touches it every LOCK_TOUCH_MS. A lock held on another
 * host (its pid means nothing here) is taken over only once untouched for LOCK_STALE_MS (that
 * process crashed; a container recreated under a new name finds its own old lock so); while fresh
 * the start is refused naming it. One held on this host is taken over only when its pid is dead.
 * Released (deleted) at stop.
 */
import { readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { hostname } from "node:os";
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { nodeHosts } from "../../schema/index.ts";

export class HostLockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostLockError";
  }
}

/** `node:<hostname>:<dev>:<ino>` for a database file; `node:<hostname>:<dataDir>` for a remote one. */
export function nodeHostId(file: { dev: number; ino: number } | null, dataDir: string): string {
  return file ? `node:${hostname()}:${file.dev}:${file.ino}` : `node:${hostname()}:${dataDir}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes this host identity for this process, or throws HostLockError naming the live holder. */
export async function acquireHostLock(db: Db, hostId: string, now: number): Promise<void> {
  const [held] = await db.select().from(nodeHosts).where(eq(nodeHosts.hostId, hostId));
  const refuse = (row: typeof nodeHosts.$inferSelect) =>
    new HostLockError(
      `Another fleetwarden process (pid ${row.pid}, since ${new Date(row.startedAt).toISOString()}) is using this database as ${hostId}; stop it first (one writer per database file)`,
    );
  if (held && held.pid !== process.pid && alive(held.pid)) throw refuse(held);
  const taken = held
    ? await db
        .update(nodeHosts)
        .set({ pid: process.pid, startedAt: now })
        .where(and(eq(nodeHosts.hostId, hostId), eq(nodeHosts.pid, held.pid)))
        .returning()
    : await db.insert(nodeHosts).values({ hostId, pid: process.pid, startedAt: now }).onConflictDoNothing().returning();
  if (taken.length === 0) {
    const [winner] = await db.select().from(nodeHosts).where(eq(nodeHosts.hostId, hostId));
    throw refuse(winner ?? { hostId, pid: 0, startedAt: now });
  }
}

export async function releaseHostLock(db: Db, hostId: string): Promise<void> {
  await db.delete(nodeHosts).where(and(eq(nodeHosts.hostId, hostId), eq(nodeHosts.pid, process.pid)));
}

function fileIdentity(path: string): { dev: number; ino: number } | null {
  try {
    const { dev, ino } = statSync(path);
    return { dev, ino };
  } catch {
    return null;
  }
}

/** The holder touches its lock this often; one untouched for LOCK_STALE_MS is another host's crashed process. */
export const LOCK_TOUCH_MS = 30_000;
export const LOCK_STALE_MS = 4 * LOCK_TOUCH_MS;

/** Whether the lock was last touched longer than LOCK_STALE_MS ago (wall clock, as the file system keeps it). */
function staleLock(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > LOCK_STALE_MS;
  } catch {
    return true;
  }
}

/** Keeps the lock fresh while this process holds it (one utimes every LOCK_TOUCH_MS); returns the stop. */
export function touchLockFile(databasePath: string): () => void {
  const path = lockFilePath(databasePath);
  const timer = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {}
  }, LOCK_TOUCH_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The lock file beside a database file. */
export const lockFilePath = (databasePath: string) => `${databasePath}.fleetwarden-lock`;

interface LockHolder {
  pid: number;
  host: string;
  startedAt: number;
}

function readHolder(path: string): LockHolder | null {
  try {
    const held = JSON.parse(readFileSync(path, "utf8")) as Partial<LockHolder>;
    return typeof held.pid === "number" && typeof held.host === "string"
      ? { pid: held.pid, host: held.host, startedAt: Number(held.startedAt ?? 0) }
      : null;
  } catch {
    return null;
  }
}

/**
 * Takes the lock file for this process, or throws HostLockError naming the holder. Bound: two
 * tries (a stale lock of this host removed once, then created exclusively).
 */
export function acquireLockFile(databasePath: string, now: number): void {
  const path = lockFilePath(databasePath);
  const mine = JSON.stringify({ pid: process.pid, host: hostname(), startedAt: now });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, mine, { flag: "wx" });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const held = readHolder(path);
    if (held && held.host !== hostname() && !staleLock(path)) {
      throw new HostLockError(
        `Another fleetwarden process (pid ${held.pid} on host ${held.host}, since ${new Date(held.startedAt).toISOString()}) holds ${path}; stop it first (one writer per database file), or delete the lock file if that host is gone`,
      );
    }
    if (held && held.pid !== process.pid && alive(held.pid)) {
      throw new HostLockError(
        `Another fleetwarden process (pid ${held.pid}, since ${new Date(held.startedAt).toISOString()}) is using this database as ${nodeHostId(fileIdentity(databasePath), dirname(databasePath))}; stop it first (one writer per database file, ${path})`,
      );
    }
    try {
      unlinkSync(path); // this host's dead holder (or an unreadable lock): taken over
    } catch {}
  }
  throw new HostLockError(`Another fleetwarden process took ${path} while this one started; stop it first (one writer per database file)`);
}

/** Deletes the lock file if this process holds it. */
export function releaseLockFile(databasePath: string): void {
  const path = lockFilePath(databasePath);
  const held = readHolder(path);
  if (held && held.pid === process.pid && held.host === hostname()) {
    try {
      unlinkSync(path);
    } catch {}
  }
}
