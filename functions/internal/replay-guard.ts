/**
 * The QStash replay guard: a signature's token id (`jti`) is accepted once. A valid signature
 * is only good for a few minutes (`exp`), so a row is kept until its token expires and pruned
 * afterwards; a replay inside that window finds the row and is refused.
 */
import { eq, lt } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { acceptedSignatures } from "../../schema/index.ts";

export async function isAccepted(db: Db, jti: string): Promise<boolean> {
  const [row] = await db.select({ jti: acceptedSignatures.jti }).from(acceptedSignatures).where(eq(acceptedSignatures.jti, jti)).limit(1);
  return Boolean(row);
}

/**
 * Records `jti` as accepted (until `expiresAt`, ms epoch) and prunes expired rows, in one batch.
 * Returns false when the token id was already there: a concurrent replay won the race.
 */
export async function acceptSignature(db: Db, jti: string, expiresAt: number, now: number): Promise<boolean> {
  const [, inserted] = await db.batch([
    db.delete(acceptedSignatures).where(lt(acceptedSignatures.expiresAt, now)),
    db.insert(acceptedSignatures).values({ jti, expiresAt }).onConflictDoNothing().returning({ jti: acceptedSignatures.jti }),
  ]);
  return inserted.length === 1;
}

/** Forgets an accepted token id whose delivery failed, so QStash's retry of it is not refused. */
export async function releaseSignature(db: Db, jti: string): Promise<void> {
  await db.delete(acceptedSignatures).where(eq(acceptedSignatures.jti, jti));
}
