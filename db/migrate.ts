/**
 * Applies the committed drizzle-kit migrations (db/migrations). Used by `npm start`, by tests and
 * by `npm run db:migrate`; never `push`. Node only: it reads the migration files from disk.
 */
import { migrate } from "drizzle-orm/libsql/migrator";
import { fileURLToPath } from "node:url";
import type { Db } from "./client.ts";

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

export async function applyMigrations(db: Db): Promise<void> {
  await migrate(db, { migrationsFolder });
}
