/**
 * Throttling of failed authentications (wrong sign-in token, wrong bearer token), kept in the
 * database so it holds across Worker isolates and restarts (each reads the lockouts in force
 * through lockout-view.ts, at most a second behind the others). Failures are counted per client
 * address and globally in one-minute windows; the attempt that reaches the limit locks that
 * scope for a minute, and is the only one logged. While a scope is locked, every attempt that
 * presents a credential is refused with 429 and Retry-After before the credential is checked,
 * so guessing stops even when a guess would have been right.
 */
import { sql } from "drizzle-orm";
import type { Context } from "hono";
import type { PipelineDeps } from "../pipeline/index.ts";
import { authFailures } from "../schema/index.ts";
import type { AuthEnv } from "./auth-env.ts";
import { lockedUntil, sawLockout } from "./lockout-view.ts";

export interface Lockout {
  retryAfterS: number;
}

/**
 * The client's address: the TCP peer under Node (@hono/node-server's `incoming`), Cloudflare's
 * `cf-connecting-ip` on Workers. Behind a reverse proxy on Node every client shares the proxy's
 * address, so the per-address limit then acts like the global one.
 */
export function clientAddress(c: Context<any>): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? c.req.header("cf-connecting-ip") ?? "unknown";
}

const scopes = (address: string) => [`addr:${address}`, "global"];

/**
 * The lockout in force for this address (or globally), if any. With the database down nothing can
 * be throttled (or done): the attempt proceeds to the credential check rather than failing as a 500.
 */
export async function currentLockout(deps: Pick<PipelineDeps, "db" | "clock" | "log">, address: string): Promise<Lockout | null> {
  const now = deps.clock.now();
  try {
    const until = await lockedUntil(deps.db, scopes(address), now);
    return until > now ? { retryAfterS: Math.ceil((until - now) / 1000) } : null;
  } catch (err) {
    deps.log.error("could not read authentication lockouts", { error: String(err) });
    return null;
  }
}

/** Counts one failed authentication from `address`; logs once when a scope becomes locked. */
export async function recordAuthFailure(deps: Pick<PipelineDeps, "db" | "clock" | "config" | "log">, address: string, what: string): Promise<void> {
  const now = deps.clock.now();
  const { windowMs, perAddress, global } = deps.config.authThrottle;
  const [addrScope, globalScope] = scopes(address) as [string, string];
  const bump = (scope: string, limit: number) => {
    const expired = sql`${authFailures.windowStart} <= ${now - windowMs}`;
    const next = sql`case when ${expired} then 1 else ${authFailures.failures} + 1 end`;
    return deps.db
      .insert(authFailures)
      .values({ scope, windowStart: now, failures: 1, lockedUntil: limit <= 1 ? now + windowMs : null })
      .onConflictDoUpdate({
        target: authFailures.scope,
        set: {
          windowStart: sql`case when ${expired} then ${now} else ${authFailures.windowStart} end`,
          failures: next,
          lockedUntil: sql`case when ${next} >= ${limit} and coalesce(${authFailures.lockedUntil}, 0) <= ${now} then ${now + windowMs} else ${authFailures.lockedUntil} end`,
        },
      })
      .returning({ scope: authFailures.scope, failures: authFailures.failures, lockedUntil: authFailures.lockedUntil });
  };
  let counted;
  try {
    counted = await deps.db.batch([bump(addrScope, perAddress), bump(globalScope, global), pruneStale(deps, now, windowMs)]);
  } catch (err) {
    deps.log.error("could not count a failed authentication", { error: String(err) });
    return;
  }
  const [[a], [g]] = counted;
  for (const [row, limit] of [[a, perAddress], [g, global]] as const) {
    if (row?.lockedUntil) sawLockout(deps.db, row.scope, row.lockedUntil);
    if (row && row.failures === limit) {
      deps.log.error("authentication locked out", { scope: row.scope, failures: row.failures, until: new Date(row.lockedUntil ?? now).toISOString(), after: what });
    }
  }
}

/** Scopes whose window and lockout are both over hold nothing: the table stays as small as the last minute. */
function pruneStale(deps: Pick<PipelineDeps, "db">, now: number, windowMs: number) {
  return deps.db
    .delete(authFailures)
    .where(sql`${authFailures.windowStart} <= ${now - windowMs} and coalesce(${authFailures.lockedUntil}, 0) <= ${now}`);
}

export function tooManyAttempts(c: Context<any>, lockout: Lockout) {
  c.header("Retry-After", String(lockout.retryAfterS));
  return c.json({ error: `too many failed authentications: try again in ${lockout.retryAfterS} s` }, 429);
}
