/**
 * Statements built once. A hot statement is written once with `sql.placeholder(...)` and
 * `.prepare()`d per database handle; each request binds its values to it, and the bound statement
 * goes into `db.batch` like a query builder would — without drizzle building the same SQL text
 * again on every request.
 */
import { fillPlaceholders } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Query } from "drizzle-orm";
import type { Db } from "./client.ts";

interface PreparedLike<TResult> {
  getQuery(): Query;
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
  /** Only carries the result type. */
  all(values?: Record<string, unknown>): Promise<TResult>;
}

/** A prepared statement with its values: a `db.batch` item whose SQL text was built once. */
export function bind<TResult>(prepared: PreparedLike<TResult>, values: Record<string, unknown>): BatchItem<"sqlite"> & { _: { result: TResult } } {
  const query = prepared.getQuery();
  return {
    _prepare: () => ({
      getQuery: () => ({ sql: query.sql, params: fillPlaceholders(query.params, values) }),
      mapResult: (response: unknown, isFromBatch?: boolean) => prepared.mapResult(response, isFromBatch),
    }),
  } as unknown as BatchItem<"sqlite"> & { _: { result: TResult } };
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
