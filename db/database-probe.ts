/**
 * Whether a database answers, told in one line: a remote database that does not answer (retried
 * briefly) or refuses the credentials, and anything that failed while opening, migrating or
 * writing to it, each as a ConfigError naming DATABASE_URL instead of a stack trace. Used by the
 * Node host's start-up checks and by `npm run db:migrate`. No host APIs.
 */
import type { Client } from "@libsql/client";
import { ConfigError } from "../runtime/config.ts";

const PROBE_ATTEMPTS = 3;
const PROBE_PAUSE_MS = 400;

/** The driver's own words for a failure, first line only (drizzle and libSQL wrap it in causes). */
export function describeDatabaseError(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string } };
  return (e.cause?.message ?? e.message ?? String(err)).split("\n")[0]!.slice(0, 160);
}

/** A remote database must answer; a 401/403 is reported as a credentials problem, at once. */
export async function probeDatabase(
  client: Client,
  url: string,
  sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)),
): Promise<void> {
  let last: unknown;
  for (let attempt = 1; attempt <= PROBE_ATTEMPTS; attempt++) {
    try {
      await client.execute("select 1");
      return;
    } catch (err) {
      last = err;
      if (/\b(401|403)\b|unauthori[sz]ed|forbidden/i.test(describeDatabaseError(err))) {
        throw new ConfigError("DATABASE_URL", `refused the credentials (set or fix DATABASE_AUTH_TOKEN): ${describeDatabaseError(err)}`);
      }
      if (url.startsWith("file:") || url === ":memory:") break;
      if (attempt < PROBE_ATTEMPTS) await sleep(PROBE_PAUSE_MS);
    }
  }
  throw new ConfigError(
    "DATABASE_URL",
    `is unreachable${url.startsWith("file:") || url === ":memory:" ? "" : ` after ${PROBE_ATTEMPTS} attempts`}: ${describeDatabaseError(last)}`,
  );
}

/** Anything that failed while opening or migrating the database, as one line. */
export function databaseFailure(step: string, err: unknown): ConfigError {
  if (err instanceof ConfigError) return err;
  const text = describeDatabaseError(err);
  if (/readonly|read-only|SQLITE_READONLY|SQLITE_CANTOPEN|permission/i.test(text)) {
    return new ConfigError("DATABASE_URL", `cannot be written (${step}): ${text}`);
  }
  return new ConfigError("DATABASE_URL", `failed while ${step}: ${text}`);
}
