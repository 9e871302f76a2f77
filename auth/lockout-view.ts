/**
 * The lockouts in force, as this process (or Worker isolate) last read them from `auth_failures`.
 * Every request that presents a credential asks whether its address is locked out; reading the
 * table for each one was the largest single statement of a chat message (a read transaction of
 * its own, ahead of the ingest). Instead the live lockouts (few: a lockout needs a minute's worth
 * of failures) are read at most once per READ_EVERY_MS per database handle, by one read that
 * concurrent requests share, and a lockout this process records itself is seen at once.
 * So on the Node host (one process) a lockout takes effect exactly as before; a lockout another
 * isolate recorded is seen here at most READ_EVERY_MS later.
 */
import { gt } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { authFailures } from "../schema/index.ts";

export const READ_EVERY_MS = 1_000;

interface View {
  /** Locked scope → locked until (ms epoch). */
  lockedUntil: Map<string, number>;
  readAt: number;
  reading: Promise<void> | null;
}

const views = new WeakMap<Db, View>();

function viewOf(db: Db): View {
  let view = views.get(db);
  if (!view) views.set(db, (view = { lockedUntil: new Map(), readAt: Number.NEGATIVE_INFINITY, reading: null }));
  return view;
}

/** The latest end of a lockout over `scopes`, from a view at most READ_EVERY_MS old (0: none). */
export async function lockedUntil(db: Db, scopes: readonly string[], now: number): Promise<number> {
  const view = viewOf(db);
  if (!(now - view.readAt < READ_EVERY_MS && now >= view.readAt)) {
    view.reading ??= read(db, view, now).finally(() => (view.reading = null));
    await view.reading;
  }
  return Math.max(0, ...scopes.map((scope) => view.lockedUntil.get(scope) ?? 0));
}

async function read(db: Db, view: View, now: number): Promise<void> {
  const rows = await db.select({ scope: authFailures.scope, lockedUntil: authFailures.lockedUntil }).from(authFailures).where(gt(authFailures.lockedUntil, now));
  const seen = new Map(rows.map((r) => [r.scope, r.lockedUntil ?? 0]));
  // A lockout recorded here while the read was under way stays (lockouts only ever run out).
  for (const [scope, until] of view.lockedUntil) if (until > now && until > (seen.get(scope) ?? 0)) seen.set(scope, until);
  view.lockedUntil = seen;
  view.readAt = now;
}

/** A lockout this process just recorded: seen by its next request, without waiting for a read. */
export function sawLockout(db: Db, scope: string, until: number): void {
  const view = viewOf(db);
  view.lockedUntil.set(scope, Math.max(until, view.lockedUntil.get(scope) ?? 0));
}
