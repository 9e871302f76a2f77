/**
 * The sign-in form's anti-forgery token: issued by the server with each form (stored hashed,
 * valid 30 minutes), and consumed by the post that carries it, once. A token the client made up,
 * or one already used, matches nothing. Issuing prunes expired tokens, so the table stays small.
 */
import { and, eq, gt, lte, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { signInTokens } from "../schema/index.ts";
import { randomToken, sha256Hex } from "./secrets.ts";

export const SIGN_IN_TOKEN_TTL_MS = 30 * 60 * 1000;
/** Outstanding tokens kept at most; beyond it the oldest are dropped (a flood of page loads cannot grow the table). */
export const MAX_SIGN_IN_TOKENS = 10_000;

export async function issueSignInToken(db: Db, now: number, max = MAX_SIGN_IN_TOKENS): Promise<string> {
  const token = randomToken();
  await db.batch([
    db.delete(signInTokens).where(lte(signInTokens.expiresAt, now)),
    db.insert(signInTokens).values({ tokenHash: await sha256Hex(token), expiresAt: now + SIGN_IN_TOKEN_TTL_MS }),
    db.delete(signInTokens).where(
      sql`${signInTokens.tokenHash} not in (select ${signInTokens.tokenHash} from ${signInTokens} order by ${signInTokens.expiresAt} desc, rowid desc limit ${max})`,
    ),
  ]);
  return token;
}

/** True exactly once per issued, unexpired token. */
export async function consumeSignInToken(db: Db, token: string, now: number): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/.test(token)) return false;
  const consumed = await db
    .delete(signInTokens)
    .where(and(eq(signInTokens.tokenHash, await sha256Hex(token)), gt(signInTokens.expiresAt, now)))
    .returning({ tokenHash: signInTokens.tokenHash });
  return consumed.length === 1;
}
