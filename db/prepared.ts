/**
 * Statements built once. A hot statement is written once with `sql.placeholder(...)` and
 * `.prepare()`d per database handle (or, for raw SQL, built once with `prepareRaw`); each request
 * binds its values to it, and the bound statement goes into `db.batch` like a query builder would
 * — without drizzle building the same SQL text again on every request.
 */
import { fillPlaceholders } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { PreparedQuery } from "drizzle-orm/session";
import type { SQLiteRaw } from "drizzle-orm/sqlite-core/query-builders/raw";
import { BoundStatement } from "./bound-statement.ts";
import type { Db } from "./client.ts";

/** A statement prepared once: a drizzle builder's `.prepare()`, or `prepareRaw`. */
interface PreparedLike<TResult> extends PreparedQuery {
  /** Runs it alone; for `bind` it only carries the result type. */
  all(values?: Record<string, unknown>): Promise<TResult>;
}

/** A prepared statement with its values: a `db.batch` item whose SQL text was built once (db/bound-statement.ts). */
export function bind<TResult>(
  prepared: PreparedLike<TResult>,
  values: Record<string, unknown>,
): BatchItem<"sqlite"> & { _: { result: TResult } } {
  return new BoundStatement<TResult>(prepared, values);
}

/**
 * A raw statement (`db.all(sql…)` / `db.run(sql…)` with placeholders) with its SQL text built
 * once: drizzle's raw statements rebuild their text on every use, prepared builders do not.
 */
export function prepareRaw<TResult>(db: Db, raw: SQLiteRaw<TResult>): PreparedLike<TResult> {
  const query = raw.getQuery();
  return {
    getQuery: () => query,
    mapResult: (response, isFromBatch) => raw.mapResult(response as never, isFromBatch),
    all: async (values = {}) => {
      const [result] = await db.$client.batch([{ sql: query.sql, args: fillPlaceholders(query.params, values) as never }]);
      return raw.mapResult(result as never, true) as TResult;
    },
  };
}

/** One prepared set per database handle, built on first use. */
export function preparedPerDb<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let built = cache.get(db);
    if (!built) cache.set(db, (built = build(db)));
    return built;
  };
}
