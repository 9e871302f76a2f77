/**
 * The prepared statements of one embedded libSQL connection (db/embedded-client.ts), kept by SQL
 * text: its last MAX_STATEMENTS, least recently used evicted first (the bound on what it holds).
 *
 * @libsql/client prepares every statement it executes anew: SQLite parses and plans the same text
 * again, synchronously on the event loop. Under webhook load that was the largest single cost of
 * the Node host (a fifth of its CPU; a cached statement runs in about a quarter of the time of a
 * freshly prepared one). The driver underneath (`libsql`, better-sqlite3's API) can run one
 * prepared statement any number of times, so the embedded client keeps them here.
 *
 * Safe because the client uses a statement only synchronously — bind, run to completion (`all`
 * or `run`), and nothing else until the next call — and a statement is reset each time it is run.
 * SQLite re-plans a cached statement when the schema changes, but the driver keeps the column
 * names it read when preparing (a cached `select *` would name the old columns), so a schema
 * statement (CREATE/ALTER/DROP, or anything the client runs through `exec`) empties the cache.
 * A schema change made by another process while this one runs is not seen this way; the host
 * lock keeps a second host off the database, and migrations run at start, before any request.
 *
 * What the client would otherwise ask the driver before every execution is read once, when the
 * statement is prepared: its columns (names and declared types), whether it returns rows
 * (`raw(true)` throws for one that does not: a native error built every time was a twentieth of a
 * webhook's CPU), and its integer mode (bigints, converted by the client).
 */
import type Database from "libsql";

export const MAX_STATEMENTS = 256;
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

type Statement = ReturnType<Database.Database["prepare"]>;

/** A statement as the client runs it, with what stays fixed while it is cached. */
export interface PreparedStatement {
  readonly statement: Statement;
  /** Rows come back as arrays (`raw`); false for a statement that returns none (run it). */
  readonly returnsRows: boolean;
  readonly columns: readonly string[];
  readonly columnTypes: readonly string[];
}

function settle(statement: Statement): PreparedStatement {
  statement.safeIntegers(true);
  let returnsRows = true;
  try {
    statement.raw(true);
  } catch {
    returnsRows = false;
  }
  const columns = returnsRows ? statement.columns() : [];
  return {
    statement,
    returnsRows,
    columns: columns.map((column) => column.name),
    columnTypes: columns.map((column) => column.type ?? ""),
  };
}

export class StatementCache {
  private readonly statements = new Map<string, PreparedStatement>();

  constructor(private readonly connection: Database.Database) {}

  /** The statement for `sql`, prepared on first use; a schema statement empties the cache and is not kept. */
  prepare(sql: string): PreparedStatement {
    const cached = this.statements.get(sql);
    if (cached) {
      // Most recently used last: Map keeps insertion order.
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    if (SCHEMA_CHANGE.test(sql)) {
      this.forget();
      return settle(this.connection.prepare(sql));
    }
    const prepared = settle(this.connection.prepare(sql));
    this.statements.set(sql, prepared);
    if (this.statements.size > MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
    return prepared;
  }

  /** Drops every kept statement: the schema may have changed (or the connection is closing). */
  forget(): void {
    this.statements.clear();
  }

  get size(): number {
    return this.statements.size;
  }
}
