/**
 * One writer per host identity. A Node host's identity is its machine name plus, for a `file:`
 * database, the file's device and inode (so a symlinked directory or another spelling of the path
 * names the same identity; hard links are refused before opening, functions/host/database-checks.ts),
 * else its data directory, so two processes on one database file always share it. On start the host records its pid in `node_hosts`; a second process whose
 * identity is held by a live pid refuses to start with one line naming that pid and since when.
 * A row left by a process that died (kill -9, crash) names a dead pid and is taken over.
 * The identity also marks the leases a host takes, so on start it recovers only its own.
 */
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
