/**
 * Prepared statements kept per embedded libSQL connection (Node host, `file:` databases).
 *
 * @libsql/client prepares every statement it executes anew: SQLite parses and plans the same text
 * again, synchronously on the event loop. Under webhook load that was the largest single cost of
 * the Node host (a fifth of its CPU; a cached statement runs in about a quarter of the time of a
 * freshly prepared one). The embedded driver underneath (`libsql`, better-sqlite3's API) can run
 * one prepared statement any number of times, so this wraps its `Database.prototype.prepare`:
 * each connection keeps its last MAX_STATEMENTS statements by SQL text, least recently used
 * evicted first (the bound on what it holds), dropped when the connection closes.
 *
 * Safe because the client uses a statement only synchronously — bind, run to completion (`all`
 * or `run`), and nothing else until the next call — and a statement is reset each time it is run.
 * SQLite re-plans a cached statement when the schema changes, but the driver keeps the column
 * names it read when preparing (a cached `select *` would name the old columns), so a schema
 * statement (CREATE/ALTER/DROP, or anything run through `exec`) empties its connection's cache.
 * Its column list is read once per statement for the same reason.
 * A schema change made by another process while this one runs is not seen this way; the host
 * lock keeps a second host off the database, and migrations run at start, before any request.
 */
import Database from "libsql";

export const MAX_STATEMENTS = 256;
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

type Statement = ReturnType<Database.Database["prepare"]>;

const caches = new WeakMap<object, Map<string, Statement>>();
/** Prepares served from a cache and prepares that built a statement, for tests and benchmarks. */
export const statementCacheStats = { hits: 0, misses: 0 };
let installed = false;

/**
 * What the client asks of a statement before every execution and what stays fixed while it is
 * cached, answered from the first asking: its columns (read twice per execution), whether it
 * returns rows (`raw(true)` throws for one that does not: a native error built every time was a
 * twentieth of a webhook's CPU), and its integer mode.
 */
function keepSettings(statement: Statement): Statement {
  const columns = statement.columns.bind(statement);
  const raw = statement.raw.bind(statement);
  const safeIntegers = statement.safeIntegers.bind(statement);
  let knownColumns: ReturnType<typeof columns> | undefined;
  let rawOn: { error: unknown } | "on" | undefined;
  let integers: boolean | undefined;
  statement.columns = () => (knownColumns ??= columns());
  statement.raw = (on = true) => {
    if (!on) {
      rawOn = undefined;
      raw(false);
      return statement;
    }
    if (rawOn === undefined) {
      try {
        raw(true);
        rawOn = "on";
      } catch (error) {
        rawOn = { error };
      }
    }
    if (rawOn !== "on") throw rawOn.error;
    return statement;
  };
  statement.safeIntegers = (on = true) => {
    if (integers !== on) safeIntegers(on);
    integers = on;
    return statement;
  };
  return statement;
}

/** Makes every embedded connection of this process keep its prepared statements (idempotent). */
export function installStatementCache(): void {
  if (installed) return;
  installed = true;
  const proto = Database.prototype as unknown as { prepare(sql: string): Statement; exec(sql: string): unknown; close(): void };
  const prepare = proto.prepare;
  const exec = proto.exec;
  const close = proto.close;
  proto.prepare = function cachedPrepare(this: object, sql: string): Statement {
    if (SCHEMA_CHANGE.test(sql)) {
      caches.delete(this);
      return prepare.call(this, sql);
    }
    let cache = caches.get(this);
    if (!cache) caches.set(this, (cache = new Map()));
    const cached = cache.get(sql);
    if (cached) {
      // Most recently used last: Map keeps insertion order.
      cache.delete(sql);
      cache.set(sql, cached);
      statementCacheStats.hits++;
      return cached;
    }
    const statement = keepSettings(prepare.call(this, sql));
    statementCacheStats.misses++;
    cache.set(sql, statement);
    if (cache.size > MAX_STATEMENTS) cache.delete(cache.keys().next().value!);
    return statement;
  };
  proto.exec = function execAndForget(this: object, sql: string): unknown {
    caches.delete(this);
    return exec.call(this, sql);
  };
  proto.close = function closeAndForget(this: object): void {
    caches.delete(this);
    close.call(this);
  };
}

