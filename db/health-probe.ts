/**
 * The cheapest real write: one row of `health_probe` overwritten. GET /healthz uses it to tell
 * whether the database accepts writes (a full disk or a read-only file fails it while `select 1`
 * still passes), and the Node host uses it at start.
 */
import { sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { healthProbe } from "../schema/index.ts";

/** Throws whatever the database says when it refuses the write. */
export async function writeHealthProbe(db: Db, now: number): Promise<void> {
  await db
    .insert(healthProbe)
    .values({ id: 1, checkedAt: now })
    .onConflictDoUpdate({ target: healthProbe.id, set: { checkedAt: sql`excluded.checked_at` } });
}
