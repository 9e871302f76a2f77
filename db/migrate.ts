/**
 * Applies the committed drizzle-kit migrations (db/migrations). Used by `npm start`, by tests and
 * by `npm run db:migrate`; never `push`. Node only: it reads the migration files from disk.
 * drizzle applies every pending migration in one transaction (one batch): a failure applies none.
 */
import { migrate } from "drizzle-orm/libsql/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { fileURLToPath } from "node:url";
import type { Db } from "./client.ts";
import journal from "./migrations/meta/_journal.json";

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

export async function applyMigrations(db: Db): Promise<void> {
  await migrate(db, { migrationsFolder });
}

/** The tags of the migrations newer than `appliedAt` (the newest applied one's journal time), in order. */
export function pendingMigrations(appliedAt: number): string[] {
  return journal.entries.filter((e) => e.when > appliedAt).map((e) => e.tag);
}

/**
 * The migration whose statement failed, from the index of the failing statement in drizzle's
 * batch (each pending migration's statements, then its row in `__drizzle_migrations`, in journal
 * order); null when the error carries no index.
 */
export function failedMigration(err: unknown, appliedAt: number): string | null {
  const index = (err as { statementIndex?: unknown }).statementIndex;
  if (typeof index !== "number") return null;
  let end = 0;
  for (const migration of readMigrationFiles({ migrationsFolder })) {
    if (migration.folderMillis <= appliedAt) continue;
    end += migration.sql.length + 1;
    if (index < end) return journal.entries.find((e) => e.when === migration.folderMillis)?.tag ?? null;
  }
  return null;
}
