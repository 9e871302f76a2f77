/**
 * `npm run db:migrate`: applies the committed migrations to DATABASE_URL (the Turso database a
 * Worker deploy needs migrated first, or a file). Every failure is one line on stderr naming the
 * problem, and exit code 1, never a stack trace: DATABASE_URL missing or not a libSQL URL, a
 * server that does not answer, a token it refuses, a migration that fails (named, with SQLite's
 * words; the pending migrations are one transaction, so none of them is applied).
 */
import { openDatabase } from "./client.ts";
import { databaseFailure, describeDatabaseError, probeDatabase } from "./database-probe.ts";
import { applyMigrations, failedMigration, pendingMigrations } from "./migrate.ts";
import { createNodeClient } from "./node-client.ts";
import { newestAppliedMigration } from "./schema-version.ts";
import { ConfigError, databaseUrlProblem } from "../runtime/config.ts";

/** DATABASE_URL as given: required here (`npm start` migrates its own file database itself). */
function databaseUrl(vars: NodeJS.ProcessEnv): string {
  const url = vars.DATABASE_URL?.trim();
  if (!url)
    throw new ConfigError(
      "DATABASE_URL",
      "is not set: name the database to migrate (libsql://<db>-<org>.turso.io for Turso, or file:<path>)",
    );
  const problem = databaseUrlProblem(url);
  if (problem) throw new ConfigError("DATABASE_URL", problem);
  return url;
}

class MigrationError extends Error {
  override name = "MigrationError";
}

async function migrateDatabase(vars: NodeJS.ProcessEnv): Promise<string> {
  const url = databaseUrl(vars);
  const shown = url.replace(/\?.*$/, "");
  const client = await createNodeClient(url, vars.DATABASE_AUTH_TOKEN?.trim() || undefined).catch((err: unknown) =>
    Promise.reject(databaseFailure("opening it", err)),
  );
  try {
    await probeDatabase(client, url);
    const db = openDatabase(client);
    const appliedAt = await newestAppliedMigration(db).catch((err: unknown) =>
      Promise.reject(databaseFailure("reading its migrations", err)),
    );
    const pending = pendingMigrations(appliedAt);
    if (pending.length === 0) return `${shown} is already migrated (${pendingMigrations(0).at(-1)}): nothing to apply`;
    try {
      await applyMigrations(db);
    } catch (err) {
      const failed = failedMigration(err, appliedAt);
      const which = failed ? `migration ${failed}` : `one of the migrations ${pending.join(", ")}`;
      throw new MigrationError(
        `db:migrate failed: ${which} did not apply to ${shown}: ${describeDatabaseError(err)} (nothing was applied: the pending migrations are one transaction)`,
      );
    }
    return `Applied ${pending.join(", ")} to ${shown}`;
  } finally {
    client.close();
  }
}

try {
  console.log(await migrateDatabase(process.env));
} catch (err) {
  const known = err instanceof ConfigError || err instanceof MigrationError;
  console.error(known ? err.message : `db:migrate failed: ${describeDatabaseError(err)}`);
  process.exit(1);
}
