/**
 * A prepared statement with its values, as drizzle's `db.batch` takes an item: the one place that
 * relies on how drizzle reads a batch, because drizzle offers no public way to batch a prepared
 * statement (its prepared queries run alone, through `execute(values)`; a query builder in a batch
 * builds its SQL text again each time, which is what preparing avoids).
 *
 * The contract, as drizzle-orm DRIZZLE_BATCH_CONTRACT reads an item (`LibSQLSession.batch` in
 * `drizzle-orm/libsql/session.js`, the session of both hosts' drivers): it calls `item._prepare()`,
 * sends the returned object's `getQuery()` — `{ sql, params }` — to the client's `batch` as one
 * statement, and hands that statement's result set to its `mapResult(result, true)`. drizzle's own
 * raw batch item, `SQLiteRaw`, has exactly this shape, declared in its public types (`_prepare():
 * PreparedQuery`); this class is typed against that declaration and drizzle's `PreparedQuery`, so
 * tsc fails if they change, and test/db/bound-statement.test.ts fails if the behaviour does: a
 * batch of bound statements must give the rows and types of the equivalent query builders.
 */
import { fillPlaceholders, type Query } from "drizzle-orm";
import type { PreparedQuery } from "drizzle-orm/session";
import type { SQLiteRaw } from "drizzle-orm/sqlite-core/query-builders/raw";

/** The drizzle-orm version (major.minor) whose batch this contract was read from. */
export const DRIZZLE_BATCH_CONTRACT = "0.45";

/** A class, not an object of closures: several are bound per request. */
export class BoundStatement<TResult> implements PreparedQuery, Pick<SQLiteRaw<TResult>, "_" | "_prepare" | "mapResult"> {
  /** Types only (the result type of `db.batch`), as drizzle's items declare it. */
  declare readonly _: { readonly dialect: "sqlite"; readonly result: TResult };

  constructor(
    private readonly prepared: PreparedQuery,
    private readonly values: Record<string, unknown>,
  ) {}

  _prepare(): PreparedQuery {
    return this;
  }

  /** The prepared SQL text as it was built once, with this statement's values in its placeholders. */
  getQuery(): Query {
    const query = this.prepared.getQuery();
    return { sql: query.sql, params: fillPlaceholders(query.params, this.values) };
  }

  mapResult(response: unknown, isFromBatch?: boolean): unknown {
    return this.prepared.mapResult(response, isFromBatch);
  }
}
