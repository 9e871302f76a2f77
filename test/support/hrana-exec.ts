/**
 * Test support for the Hrana test server: runs Hrana statements, batches and sequences on one
 * embedded libSQL connection (the `libsql` native module that ships with @libsql/client), with the
 * structures and error codes of tursodatabase/libsql docs/HRANA_3_SPEC.md ("Shared structures") and
 * libsql-server/src/hrana/{stmt,batch}.rs at commit f8fb14f3638e44edf3dbace489618c7768daee55.
 *
 * Two kinds of failure, as the server has them: a `StmtError` (SQLite error, bad arguments, not
 * exactly one statement) is an answer — a pipeline's `error` result or a batch's step error — while
 * a `ProtocolError` (sql and sql_id both or neither, unknown sql_id, a condition naming a later
 * step, a Hrana 3 feature on v2) means the client broke the protocol and fails the whole HTTP
 * request with 400.
 */
import type Database from "libsql";
import { analyzeSql } from "./hrana-sql.ts";
import { countRows, type RowCount } from "./turso-rows.ts";

export type Value =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

export interface Stmt {
  sql?: string | null;
  sql_id?: number | null;
  args?: Value[];
  named_args?: { name: string; value: Value }[];
  want_rows?: boolean;
}

export type BatchCond =
  | { type: "ok"; step: number }
  | { type: "error"; step: number }
  | { type: "not"; cond: BatchCond }
  | { type: "and"; conds: BatchCond[] }
  | { type: "or"; conds: BatchCond[] }
  | { type: "is_autocommit" };

export interface BatchStep {
  condition?: BatchCond | null;
  stmt: Stmt;
}

export interface HranaError {
  message: string;
  code: string;
}

export interface StmtResult {
  cols: { name: string | null; decltype: string | null }[];
  rows: Value[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
  rows_read: number;
  rows_written: number;
  query_duration_ms: number;
}

/** The client broke the protocol: the whole HTTP request fails with 400 (text body). */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/** A statement failed: reported inside the pipeline's results, the stream stays usable. */
export class StmtError extends Error {
  override name = "StmtError";
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
  toHrana(): HranaError {
    return { message: this.message, code: this.code };
  }
}

export interface Connection {
  db: Database.Database;
  /** SQL texts stored with store_sql, scoped to the stream. */
  sqls: Map<number, string>;
  version: 2 | 3;
  /** Told the rows each executed statement read and wrote, as Turso bills them (test/support/turso-rows.ts). */
  onRows?: (sql: string, rows: RowCount) => void;
}

/** Exactly one of `sql` and `sql_id`, resolved to the SQL text. */
export function resolveSql(conn: Connection, sql: string | null | undefined, sqlId: number | null | undefined): string {
  const hasSql = sql !== undefined && sql !== null;
  if (hasSql && sqlId != null) throw new ProtocolError("Either `sql` or `sql_id` are required, but not both");
  if (hasSql) return sql;
  if (sqlId == null) throw new ProtocolError("Either `sql` or `sql_id` are required");
  const stored = conn.sqls.get(sqlId);
  if (stored === undefined) throw new ProtocolError(`SQL text ${sqlId} not found`);
  return stored;
}

function decodeValue(value: Value): unknown {
  switch (value.type) {
    case "null":
      return null;
    case "integer":
      return BigInt(value.value);
    case "float":
      return value.value;
    case "text":
      return value.value;
    case "blob":
      return Buffer.from(value.base64, "base64");
  }
}

function encodeValue(value: unknown): Value {
  if (value === null || value === undefined) return { type: "null" };
  if (typeof value === "bigint") return { type: "integer", value: value.toString() };
  if (typeof value === "number") return { type: "float", value };
  if (typeof value === "string") return { type: "text", value };
  if (value instanceof Uint8Array) return { type: "blob", base64: Buffer.from(value).toString("base64") };
  throw new Error(`cannot encode a value of type ${typeof value}`);
}

/** Binds arguments by parameter index, checking them against what the SQL expects. */
function bindArgs(sql: string, stmt: Stmt): unknown[] {
  const shape = analyzeSql(sql);
  if (shape.statements === 0) throw new StmtError("SQL string does not contain any statement", "SQL_NO_STATEMENT");
  if (shape.statements > 1) throw new StmtError("SQL string contains more than one statement", "SQL_MANY_STATEMENTS");
  const args = stmt.args ?? [];
  const named = stmt.named_args ?? [];
  if (args.length > 0 && named.length > 0) {
    throw new StmtError("Specifying both positional and named arguments is not supported", "ARGS_BOTH_POSITIONAL_AND_NAMED");
  }
  if (named.length === 0) {
    if (args.length !== shape.paramCount) {
      throw new StmtError(`Arguments do not match SQL parameters: expected ${shape.paramCount}, got ${args.length}`, "ARGS_INVALID");
    }
    return args.map(decodeValue);
  }
  const bound: unknown[] = new Array(shape.paramCount).fill(undefined);
  for (const { name, value } of named) {
    // Spec: a name without its prefix sign is matched by guessing the prefix.
    const candidates = /^[:@$?]/.test(name) ? [name] : [`:${name}`, `@${name}`, `$${name}`];
    const index = candidates.map((c) => shape.names.get(c)).find((i) => i !== undefined);
    if (index === undefined) throw new StmtError(`Arguments do not match SQL parameters: no parameter named ${name}`, "ARGS_INVALID");
    bound[index - 1] = decodeValue(value);
  }
  const missing = bound.indexOf(undefined);
  if (missing >= 0) throw new StmtError(`Arguments do not match SQL parameters: parameter ${missing + 1} is not bound`, "ARGS_INVALID");
  return bound;
}

/** `SQLITE_CONSTRAINT_UNIQUE` → `SQLITE_CONSTRAINT`: the server reports primary result codes. */
function sqliteError(err: unknown): StmtError {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === "string" && /^SQLITE_[A-Z]+/.test(e.code) ? e.code.match(/^SQLITE_[A-Z]+/)![0] : "SQLITE_UNKNOWN";
  return new StmtError(`SQLite error: ${String(e.message ?? err)}`, code);
}

export function executeStmt(conn: Connection, stmt: Stmt): StmtResult {
  const sql = resolveSql(conn, stmt.sql, stmt.sql_id);
  const args = bindArgs(sql, stmt);
  const started = performance.now();
  try {
    const { result, rows: counted } = countRows(conn.db, sql, () => {
      const prepared = conn.db.prepare(sql).safeIntegers(true);
      let rows: unknown[][] = [];
      let cols: StmtResult["cols"] = [];
      if (prepared.reader) {
        cols = prepared.columns().map((c) => ({ name: c.name, decltype: c.type }));
        rows = prepared.raw(true).all(args) as unknown[][];
      } else {
        prepared.run(args);
      }
      const [changes, lastRowid] = conn.db.prepare("select changes(), last_insert_rowid()").raw(true).safeIntegers(true).get() as [
        bigint,
        bigint,
      ];
      return { result: { cols, rows, changes, lastRowid }, returned: rows.length, hold: prepared };
    });
    conn.onRows?.(sql, counted);
    return {
      cols: result.cols,
      rows: stmt.want_rows === false ? [] : result.rows.map((row) => row.map(encodeValue)),
      affected_row_count: Number(result.changes),
      last_insert_rowid: result.lastRowid.toString(),
      rows_read: counted.read,
      rows_written: counted.written,
      query_duration_ms: performance.now() - started,
    };
  } catch (err) {
    throw sqliteError(err);
  }
}

export function isAutocommit(conn: Connection): boolean {
  return !conn.db.inTransaction;
}

function checkCond(cond: BatchCond, stepIndex: number, version: 2 | 3): void {
  switch (cond.type) {
    case "ok":
    case "error":
      if (!Number.isInteger(cond.step) || cond.step < 0 || cond.step >= stepIndex) {
        throw new ProtocolError("Invalid reference to step in a batch condition");
      }
      return;
    case "not":
      return checkCond(cond.cond, stepIndex, version);
    case "and":
    case "or":
      for (const c of cond.conds) checkCond(c, stepIndex, version);
      return;
    case "is_autocommit":
      if (version < 3) throw new ProtocolError("The `is_autocommit` condition is only supported in protocol version 3 and higher");
      return;
  }
}

export function executeBatch(conn: Connection, steps: BatchStep[]) {
  // Every step is checked before any runs: a protocol error must not leave half a batch applied.
  steps.forEach((step, i) => {
    if (step.condition) checkCond(step.condition, i, conn.version);
    resolveSql(conn, step.stmt.sql, step.stmt.sql_id);
  });
  const results: (StmtResult | null)[] = [];
  const errors: (HranaError | null)[] = [];
  const evaluate = (cond: BatchCond): boolean => {
    switch (cond.type) {
      case "ok":
        return results[cond.step] !== null;
      case "error":
        return errors[cond.step] !== null;
      case "not":
        return !evaluate(cond.cond);
      case "and":
        return cond.conds.every(evaluate);
      case "or":
        return cond.conds.some(evaluate);
      case "is_autocommit":
        return isAutocommit(conn);
    }
  };
  for (const step of steps) {
    if (step.condition && !evaluate(step.condition)) {
      results.push(null);
      errors.push(null);
      continue;
    }
    try {
      results.push(executeStmt(conn, step.stmt));
      errors.push(null);
    } catch (err) {
      if (!(err instanceof StmtError)) throw err;
      results.push(null);
      errors.push(err.toHrana());
    }
  }
  return { step_results: results, step_errors: errors };
}

/** Runs every statement of `sql` in order; the first failure stops the rest (spec: "sequence"). */
export function executeSequence(conn: Connection, sql: string): void {
  try {
    conn.db.exec(sql);
  } catch (err) {
    throw sqliteError(err);
  }
}
