/**
 * Is the database at the schema this build expects? Compares the newest migration drizzle recorded
 * in `__drizzle_migrations` (its `created_at` is the journal entry's `when`) with the newest entry
 * of the bundled journal. The Worker cannot apply migrations (they are files, applied with
 * `npm run db:migrate`), so it asks this once per isolate and refuses to serve a database that is
 * behind instead of failing later on a missing column. Runs on both hosts: no Node APIs.
 */
import { sql } from "drizzle-orm";
import journal from "./migrations/meta/_journal.json";
import type { Db } from "./client.ts";

export type SchemaStatus = { state: "current" } | { state: "behind"; applied: string | null; expected: string };

const latest = journal.entries.reduce((a, b) => (b.when > a.when ? b : a));

/**
 * The journal time (`when`) of the newest migration applied to the database, 0 when none is (no
 * migrations table yet); throws when the database cannot answer.
 */
export async function newestAppliedMigration(db: Db): Promise<number> {
  try {
    const rows = await db.all<{ created_at: number | string | null }>(sql`select max(created_at) as created_at from __drizzle_migrations`);
    return Number(rows[0]?.created_at ?? 0);
  } catch (err) {
    if (/no such table/.test(errorText(err))) return 0;
    throw err;
  }
}

/**
 * The newest applied migration against the bundled journal, in one round trip; throws when the
 * database cannot answer (unreachable is not "behind").
 */
export async function schemaStatus(db: Db): Promise<SchemaStatus> {
  const appliedAt = await newestAppliedMigration(db);
  if (appliedAt >= latest.when) return { state: "current" };
  const applied =
    journal.entries.find((e) => e.when === appliedAt)?.tag ?? (appliedAt ? `a migration from ${new Date(appliedAt).toISOString()}` : null);
  return { state: "behind", applied, expected: latest.tag };
}

/** What an operator reads when the database is behind. */
export function schemaBehindMessage(status: Extract<SchemaStatus, { state: "behind" }>): string {
  const at = status.applied ? `is at ${status.applied}` : "has no migrations applied";
  return `database schema is behind: it ${at}, this deployment needs ${status.expected}; run \`npm run db:migrate\` against DATABASE_URL`;
}

/** drizzle wraps driver errors; the driver's message is on the cause. */
function errorText(err: unknown): string {
  let text = "";
  for (let e: unknown = err; e instanceof Error; e = e.cause) text += ` ${e.message}`;
  return text;
}
