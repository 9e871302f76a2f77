/**
 * The lockouts in force, as this process (or Worker isolate) last read them from `auth_failures`.
 * Every request that presents a credential asks whether its address is locked out; reading the
 * table for each one was the largest single statement of a chat message (a read transaction of
 * its own, ahead of the ingest). Instead the live lockouts (few: a lockout needs a minute's worth
 * of failures) are read at most once per READ_EVERY_MS per database handle, by one read that
 * concurrent requests share, and a lockout this process records itself is seen at once.
 * So on the Node host (one process) a lockout takes effect exactly as before; a lockout another
 * isolate recorded is seen here at most READ_EVERY_MS later.
 * How long a lockout lasts is measured here on the monotonic clock (runtime/clock.ts): its stored
 * end (wall clock) gives what is left when first seen, at most the lockout's length, and a later
 * read of the same lockout keeps that deadline. A backward wall-clock step therefore extends no
 * lockout; a forward step ends one early (its stored end has passed). On Workers, with no
 * monotonic clock, the wall clock stands in.
 */
import { gt } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { monotonicNow, type Clock } from "../runtime/clock.ts";
import { authFailures } from "../schema/index.ts";

export const READ_EVERY_MS = 1_000;

interface Seen {
  /** The stored end (wall ms epoch): the lockout's identity. */
  until: number;
  /** When it ends on the monotonic clock. */
  deadline: number;
}

interface View {
  locked: Map<string, Seen>;
  readAt: number;
  reading: Promise<void> | null;
}

const views = new WeakMap<Db, View>();

function viewOf(db: Db): View {
  let view = views.get(db);
  if (!view) views.set(db, (view = { locked: new Map(), readAt: Number.NEGATIVE_INFINITY, reading: null }));
  return view;
}

/** A lockout first seen now: what is left of it, never more than `maxMs`, from the monotonic now. */
function seenNow(view: View, scope: string, until: number, wall: number, mono: number, maxMs: number): Seen {
  const known = view.locked.get(scope);
  if (known && known.until === until) return known;
  return { until, deadline: mono + Math.min(Math.max(0, until - wall), maxMs) };
}

/** The longest time left (ms) of a lockout over `scopes`, from a view at most READ_EVERY_MS old (0: none). */
export async function lockoutLeft(db: Db, clock: Clock, scopes: readonly string[], maxMs: number): Promise<number> {
  const view = viewOf(db);
  const mono = monotonicNow(clock);
  if (!(mono - view.readAt < READ_EVERY_MS && mono >= view.readAt)) {
    view.reading ??= read(db, view, clock, maxMs).finally(() => (view.reading = null));
    await view.reading;
  }
  const now = monotonicNow(clock);
  return Math.max(0, ...scopes.map((scope) => (view.locked.get(scope)?.deadline ?? now) - now));
}

async function read(db: Db, view: View, clock: Clock, maxMs: number): Promise<void> {
  const wall = clock.now();
  const mono = monotonicNow(clock);
  const rows = await db
    .select({ scope: authFailures.scope, lockedUntil: authFailures.lockedUntil })
    .from(authFailures)
    .where(gt(authFailures.lockedUntil, wall));
  const seen = new Map<string, Seen>();
  for (const r of rows) seen.set(r.scope, seenNow(view, r.scope, r.lockedUntil ?? 0, wall, mono, maxMs));
  // A lockout recorded here while the read was under way stays (lockouts only ever run out).
  for (const [scope, known] of view.locked)
    if (known.deadline > mono && known.deadline > (seen.get(scope)?.deadline ?? 0)) seen.set(scope, known);
  // A stored lockout whose deadline has passed stays in the view, run out: read again after a
  // backward step (its stored end still ahead), it must not start over.
  view.locked = seen;
  view.readAt = mono;
}

/** A lockout this process just recorded: seen by its next request, without waiting for a read. */
export function sawLockout(db: Db, clock: Clock, scope: string, until: number, maxMs: number): void {
  const view = viewOf(db);
  const s = seenNow(view, scope, until, clock.now(), monotonicNow(clock), maxMs);
  const known = view.locked.get(scope);
  if (!known || s.deadline >= known.deadline) view.locked.set(scope, s);
}
