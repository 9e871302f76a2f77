/**
 * Whether a database error is Turso refusing for its plan: past the plan's quota Turso answers the
 * Hrana error code `BLOCKED` ("Operation was blocked[: reason]"; tursodatabase/libsql
 * libsql-server/src/error.rs `Error::Blocked` at commit 01a8630ec6950d8bdd5c27173d4cc0f464a69e5b,
 * mapped to the statement error code "BLOCKED" by libsql-server/src/hrana/stmt.rs
 * `StmtError::code`), and a database over its size fails writes with `SQLITE_FULL`. The libSQL
 * clients surface the code as `LibsqlError.code` (and drizzle may wrap it as `cause`), so the
 * chain of causes is searched. Such a refusal does not pass by itself within minutes: it is told
 * like the scheduler's refusal (notify/database-refusal.ts), never retried into silence.
 */

const MAX_DEPTH = 5;

/** `BLOCKED: <message>` or `SQLITE_FULL: <message>` when `err` is such a refusal, else null. */
export function quotaRefusal(err: unknown): string | null {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_DEPTH && current && typeof current === "object"; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    const text = typeof message === "string" ? message : "";
    if (code === "BLOCKED" || /Operation was blocked/i.test(text)) return `BLOCKED: ${text.slice(0, 300)}`;
    if ((typeof code === "string" && code.startsWith("SQLITE_FULL")) || /database or disk is full/i.test(text))
      return `SQLITE_FULL: ${text.slice(0, 300)}`;
    current = cause;
  }
  return null;
}
