/**
 * Throttling of failed authentications (wrong sign-in token, wrong bearer token), kept in the
 * database so it holds across Worker isolates and restarts (each reads the lockouts in force
 * through lockout-view.ts, at most a second behind the others). Failures are counted per client
 * address (IPv4 per address, IPv6 per /64: one host holds a whole /64) and globally in one-minute
 * windows; the attempt that reaches a limit locks that scope for a minute, and is the only one
 * logged. While an address is locked, every attempt from it that presents a credential is refused
 * with 429 and Retry-After before the credential is checked, so guessing stops even when a guess
 * would have been right. The global scope cannot lock everyone out: it is asked only after the
 * credential failed, so a valid token (or a session) is never refused by it, and only unknown
 * credentials are refused (429) while it is locked.
 */
import { sql } from "drizzle-orm";
import type { Context } from "hono";
import type { PipelineDeps } from "../pipeline/index.ts";
import { authFailures } from "../schema/index.ts";
import { lockoutLeft, sawLockout } from "./lockout-view.ts";

export interface Lockout {
  /** `address`: refuse before the credential is checked; `global`: refuse only a failed credential. */
  scope: "address" | "global";
  retryAfterS: number;
}

/**
 * The client's address: the TCP peer under Node (@hono/node-server's `incoming`), Cloudflare's
 * `cf-connecting-ip` on Workers. Behind a reverse proxy, TRUST_PROXY names the header the proxy
 * sets, and only then is a header believed; of a list (x-forwarded-for) the last entry is taken:
 * it is the one the trusted proxy appended, while every entry before it came from the client.
 */
export function clientAddress(c: Context, trustProxyHeader: string | null = null): string {
  if (trustProxyHeader) {
    const hops = (c.req.header(trustProxyHeader) ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
    if (hops.length) return hops.at(-1)!;
  }
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? c.req.header("cf-connecting-ip") ?? "unknown";
}

/** The 8 groups of an IPv6 address, or null when it is not one (an IPv4-mapped tail counts as two groups). */
function ipv6Groups(address: string): string[] | null {
  if (!address.includes(":")) return null;
  let text = address
    .replace(/^\[|\]$/g, "")
    .split("%")[0]!
    .toLowerCase();
  const v4 = text.match(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (v4) text = text.slice(0, v4.index) + [((+v4[1]! << 8) | +v4[2]!).toString(16), ((+v4[3]! << 8) | +v4[4]!).toString(16)].join(":");
  const [head, tail] = text.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const fill = tail === undefined ? [] : Array(Math.max(0, 8 - left.length - right.length)).fill("0");
  const groups = [...left, ...fill, ...right];
  return groups.length === 8 && groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups.map((g) => g.replace(/^0+(?=.)/, "")) : null;
}

/** The per-address scope's key: an IPv4 address as it is (an IPv4-mapped IPv6 one too), an IPv6 address's /64. */
export function addressKey(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff") {
    const [hi, lo] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
  }
  return `${groups.slice(0, 4).join(":")}::/64`;
}

const scopes = (address: string) => [`addr:${addressKey(address)}`, "global"] as const;

/**
 * The lockout in force for this address (`address`), or globally (`global`: it refuses only a
 * credential that failed), if any. With the database down nothing can be throttled (or done):
 * the attempt proceeds to the credential check rather than failing as a 500.
 */
export async function currentLockout(
  deps: Pick<PipelineDeps, "db" | "clock" | "log" | "config">,
  address: string,
): Promise<Lockout | null> {
  const [addrScope, globalScope] = scopes(address);
  const maxMs = deps.config.authThrottle.windowMs;
  try {
    const addressLeft = await lockoutLeft(deps.db, deps.clock, [addrScope], maxMs);
    if (addressLeft > 0) return { scope: "address", retryAfterS: Math.ceil(addressLeft / 1000) };
    const globalLeft = await lockoutLeft(deps.db, deps.clock, [globalScope], maxMs);
    return globalLeft > 0 ? { scope: "global", retryAfterS: Math.ceil(globalLeft / 1000) } : null;
  } catch (err) {
    deps.log.error("could not read authentication lockouts", { error: String(err) });
    return null;
  }
}

/** Counts one failed authentication from `address`; logs once when a scope becomes locked. */
export async function recordAuthFailure(
  deps: Pick<PipelineDeps, "db" | "clock" | "config" | "log">,
  address: string,
  what: string,
): Promise<void> {
  const now = deps.clock.now();
  const { windowMs, perAddress, global } = deps.config.authThrottle;
  const [addrScope, globalScope] = scopes(address);
  const bump = (scope: string, limit: number) => {
    // A window or lockout that starts or ends past where it could (the wall clock stepped back
    // since it was written) is over, not extended by the step.
    const expired = sql`(${authFailures.windowStart} <= ${now - windowMs} or ${authFailures.windowStart} > ${now})`;
    const lockOver = sql`(coalesce(${authFailures.lockedUntil}, 0) <= ${now} or ${authFailures.lockedUntil} > ${now + windowMs})`;
    const next = sql`case when ${expired} then 1 else ${authFailures.failures} + 1 end`;
    return deps.db
      .insert(authFailures)
      .values({ scope, windowStart: now, failures: 1, lockedUntil: limit <= 1 ? now + windowMs : null })
      .onConflictDoUpdate({
        target: authFailures.scope,
        set: {
          windowStart: sql`case when ${expired} then ${now} else ${authFailures.windowStart} end`,
          failures: next,
          lockedUntil: sql`case when ${next} >= ${limit} and ${lockOver} then ${now + windowMs} else ${authFailures.lockedUntil} end`,
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
  for (const [row, limit] of [
    [a, perAddress],
    [g, global],
  ] as const) {
    if (row?.lockedUntil) sawLockout(deps.db, deps.clock, row.scope, row.lockedUntil, windowMs);
    if (row && row.failures === limit) {
      deps.log.error("authentication locked out", {
        scope: row.scope,
        failures: row.failures,
        until: new Date(row.lockedUntil ?? now).toISOString(),
        after: what,
      });
    }
  }
}

/** Scopes whose window and lockout are both over hold nothing: the table stays as small as the last minute. */
function pruneStale(deps: Pick<PipelineDeps, "db">, now: number, windowMs: number) {
  return deps.db.delete(authFailures).where(sql`(${authFailures.windowStart} <= ${now - windowMs} or ${authFailures.windowStart} > ${now})
      and (coalesce(${authFailures.lockedUntil}, 0) <= ${now} or ${authFailures.lockedUntil} > ${now + windowMs})`);
}

export function tooManyAttempts(c: Context, lockout: Lockout) {
  c.header("Retry-After", String(lockout.retryAfterS));
  return c.json({ error: `too many failed authentications: try again in ${lockout.retryAfterS} s` }, 429);
}
