/**
 * The embedded client's one connection (db/embedded-client.ts): a `libsql` Database it opened,
 * with its settings applied on opening and its prepared statements kept (db/statement-cache.ts);
 * runs a statement, a batch inside a transaction, or a script, with @libsql/client's results and
 * errors (db/embedded-results.ts).
 */
import { LibsqlBatchError, LibsqlError, type InArgs, type InStatement, type ResultSet, type TransactionMode } from "@libsql/client";
import Database from "libsql";
import { argsToSql, EmbeddedResultSet, mapDriverError, rowFromSql } from "./embedded-results.ts";
import { StatementCache } from "./statement-cache.ts";

export interface EmbeddedOptions {
  /** How long a statement waits for another writer's lock (ms); the driver sets it on opening. */
  timeout?: number;
  /** Statements run on the connection as soon as it is open (its PRAGMAs). */
  setup?: readonly string[];
}

export type BatchStatement = InStatement | [string, InArgs?];

const BEGIN: Record<TransactionMode, string> = { write: "BEGIN IMMEDIATE", read: "BEGIN TRANSACTION READONLY", deferred: "BEGIN DEFERRED" };

/** The BEGIN of a transaction mode, as @libsql/client writes it (a RangeError for an unknown mode). */
export function begin(mode: TransactionMode): string {
  if (!Object.hasOwn(BEGIN, mode)) throw new RangeError('Unknown transaction mode, supported values are "write", "read" and "deferred"');
  return BEGIN[mode];
}

const statementOf = (stmt: BatchStatement): InStatement => (Array.isArray(stmt) ? { sql: stmt[0], args: stmt[1] ?? [] } : stmt);

/** A statement's failure inside a batch, naming the statement. */
export function batchError(error: unknown, index: number): unknown {
  if (error instanceof LibsqlBatchError || !(error instanceof LibsqlError)) return error;
  return new LibsqlBatchError(
    error.message,
    index,
    error.code,
    error.extendedCode,
    error.rawCode,
    error.cause instanceof Error ? error.cause : undefined,
  );
}

/** The one connection and its statements. */
export class Connection {
  readonly db: Database.Database;
  private readonly statements: StatementCache;

  constructor(path: string, options: EmbeddedOptions) {
    this.db = new Database(path, { timeout: options.timeout });
    this.statements = new StatementCache(this.db);
    try {
      for (const sql of options.setup ?? []) this.run(sql);
    } catch (error) {
      this.close();
      throw error;
    }
  }

  run(stmt: InStatement): ResultSet {
    const sql = typeof stmt === "string" ? stmt : stmt.sql;
    const args = typeof stmt === "string" ? [] : argsToSql(stmt.args);
    try {
      const prepared = this.statements.prepare(sql);
      if (prepared.returnsRows) {
        const rows = (prepared.statement.all(args) as unknown[][]).map((values) => rowFromSql(values, prepared.columns));
        return new EmbeddedResultSet([...prepared.columns], [...prepared.columnTypes], rows, 0, undefined);
      }
      const info = prepared.statement.run(args);
      return new EmbeddedResultSet([], [], [], info.changes, BigInt(info.lastInsertRowid));
    } catch (error) {
      throw mapDriverError(error);
    }
  }

  /** Statements in one transaction: all committed, or none (rolled back by the caller's `release`). */
  runAll(beginWith: string, stmts: readonly BatchStatement[]): ResultSet[] {
    this.run(beginWith);
    const results: ResultSet[] = [];
    for (let i = 0; i < stmts.length; i++) {
      try {
        if (!this.db.inTransaction) throw new LibsqlBatchError("The transaction has been rolled back", i, "TRANSACTION_CLOSED");
        results.push(this.run(statementOf(stmts[i]!)));
      } catch (error) {
        throw batchError(error, i);
      }
    }
    this.run("COMMIT");
    return results;
  }

  /** Several statements as one script; the schema may change, so the kept statements go. */
  exec(sql: string): void {
    this.statements.forget();
    try {
      this.db.exec(sql);
    } catch (error) {
      throw mapDriverError(error);
    }
  }

  close(): void {
    this.statements.forget();
    if (this.db.open) this.db.close();
  }
}
