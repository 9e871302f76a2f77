/**
 * Server-side dashboard sessions. The cookie holds a random 256-bit id; the database holds its
 * hash with the operator, a random per-session CSRF token, creation, last use, absolute expiry
 * (SESSION_TTL_S) and revocation. A session is valid only while unrevoked, unexpired and used
 * within SESSION_IDLE_TIMEOUT_S; last use is written at most once a minute, not per request.
 */
import { and, eq, isNull, lt } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { operatorSessions } from "../schema/index.ts";
import { principalForId } from "./operators-store.ts";
import { BOOTSTRAP_ADMIN, type Principal } from "./roles.ts";
import { randomToken, sha256Hex } from "./secrets.ts";

const TOUCH_EVERY_MS = 60_000;
/** Revoked or expired rows are kept this long (for the record), then pruned at the next sign-in. */
const KEEP_ENDED_MS = 30 * 24 * 3600 * 1000;

export interface SessionTimes {
  ttlMs: number;
  idleMs: number;
}

export interface LiveSession {
  idHash: string;
  principal: Principal;
  csrfToken: string;
}

/**
 * A new session for `principal`, signed in with `credential` (its hash is kept so that rotating
 * ADMIN_TOKEN ends the bootstrap admin's sessions). Returns the cookie's id (only here, never stored).
 */
export async function createSession(db: Db, principal: Principal, credential: string, times: SessionTimes, now: number) {
  const id = randomToken();
  const csrfToken = randomToken();
  const idHash = await sha256Hex(id);
  await db.batch([
    db.delete(operatorSessions).where(lt(operatorSessions.expiresAt, now - KEEP_ENDED_MS)),
    db.insert(operatorSessions).values({
      idHash,
      operatorId: principal.operatorId,
      csrfToken,
      credentialHash: await sha256Hex(credential),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + times.ttlMs,
    }),
  ]);
  return { id, session: { idHash, principal, csrfToken } satisfies LiveSession };
}

/**
 * The live session a cookie id names, or null: unknown, revoked, expired, idle, operator revoked,
 * or a bootstrap-admin session from before ADMIN_TOKEN changed.
 */
export async function findSession(
  db: Db,
  id: string | undefined,
  options: SessionTimes & { adminToken: string | undefined },
  now: number,
): Promise<LiveSession | null> {
  const times = options;
  if (!id || !/^[0-9a-f]{64}$/.test(id)) return null;
  const idHash = await sha256Hex(id);
  const [row] = await db.select().from(operatorSessions).where(eq(operatorSessions.idHash, idHash));
  if (!row || row.revokedAt !== null || row.expiresAt <= now || row.lastSeenAt + times.idleMs <= now) return null;
  if (
    row.operatorId === BOOTSTRAP_ADMIN.operatorId &&
    (!options.adminToken || row.credentialHash !== (await sha256Hex(options.adminToken)))
  )
    return null;
  const principal = await principalForId(db, row.operatorId);
  if (!principal) return null;
  if (now - row.lastSeenAt >= TOUCH_EVERY_MS) {
    await db.update(operatorSessions).set({ lastSeenAt: now }).where(eq(operatorSessions.idHash, idHash));
  }
  return { idHash, principal, csrfToken: row.csrfToken };
}

export async function revokeSession(db: Db, idHash: string, now: number): Promise<void> {
  await db
    .update(operatorSessions)
    .set({ revokedAt: now })
    .where(and(eq(operatorSessions.idHash, idHash), isNull(operatorSessions.revokedAt)));
}

/** "Sign out everywhere": every live session of this operator. Returns how many were revoked. */
export async function revokeAllSessions(db: Db, operatorId: number, now: number): Promise<number> {
  const revoked = await db
    .update(operatorSessions)
    .set({ revokedAt: now })
    .where(and(eq(operatorSessions.operatorId, operatorId), isNull(operatorSessions.revokedAt)))
    .returning({ idHash: operatorSessions.idHash });
  return revoked.length;
}
