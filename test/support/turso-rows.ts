/**
 * Turso's billed rows for one statement, measured on an embedded libSQL connection (test support for
 * the Hrana test server's `rows_read` / `rows_written`, and bench/turso-rows.bench.ts).
 *
 * How Turso counts (docs.turso.tech/billing-details, "Usage-based billing model"): a row read is a
 * row *scanned* while the statement runs (a query may scan more rows than it returns; a full table
 * scan reads every row of the table; aggregates read every row they consider; an update reads each
 * row it changes; sqlite_* tables are free); a row written is a *table* row inserted, updated or
 * deleted. The reference server fills StmtResult.rows_read / rows_written from libSQL's own
 * counters, `sqlite3_stmt_status(stmt, LIBSQL_STMTSTATUS_ROWS_READ / _ROWS_WRITTEN)` (libsql's
 * patch to SQLite's shell.c prints them). The `libsql` npm driver (0.5.x) does not expose
 * `sqlite3_stmt_status`, so this measures what SQLite does expose:
 *
 * - **written, exact**: the connection's `total_changes()` delta across the statement (table rows
 *   inserted, updated, deleted, including rows changed by triggers; index entries are not table
 *   rows and are not counted, as the docs count "table rows").
 * - **read, full scans exact, index searches a lower bound**: SQLite's FULLSCAN_STEP counter of the
 *   statement (the `sqlite_stmt` virtual table's `nscan`, compiled into libsql with
 *   SQLITE_ENABLE_STMTVTAB): one per step from a row to the next of a full table or index scan, in
 *   any loop, plus the scan's first row (once per statement: a scan repeated inside a loop is short
 *   one row a repetition). `count(*)` of a whole table is answered by SQLite's count opcode
 *   without steps and counts 0 here, though Turso's docs bill a row per row counted.
 *   A statement without full-scan steps found its rows through an index or the rowid, which SQLite
 *   does not count: those are estimated as the rows it returned, or changed by an update, delete or
 *   upsert (a point lookup that finds its row is 1). Not in the figure: what an index search visits
 *   and then filters out, rows an aggregate over an index search considers (count(*) of an agent's
 *   rows is 1), and the index-searched side of a join whose other side is scanned. (SQLite's
 *   EXPLAIN QUERY PLAN is not used: the driver leaves those statements busy, which blocks COMMIT.)
 */
import type Database from "libsql";

export interface RowCount {
  read: number;
  written: number;
}

const totalChanges = (db: Database.Database) =>
  Number((db.prepare("select total_changes()").raw(true).all() as [number | bigint][])[0]![0]);

const fullScanSteps = (db: Database.Database, sql: string) =>
  Number((db.prepare("select coalesce(sum(nscan), 0) from sqlite_stmt where sql = ?").raw(true).all(sql) as [number | bigint][])[0]![0]);

/**
 * Runs `run` (which executes the prepared statement `sql` once on `db` and returns the rows it
 * returned) and counts its rows as Turso would bill them (see the header for what is estimated).
 */
export function countRows<T>(
  db: Database.Database,
  sql: string,
  // `hold`: the prepared statement, kept referenced until its counter is read (sqlite_stmt lists live statements only).
  run: () => { result: T; returned: number; hold: unknown },
): {
  result: T;
  rows: RowCount;
} {
  const changesBefore = totalChanges(db);
  const scanBefore = fullScanSteps(db, sql);
  const { result, returned, hold } = run();
  const written = totalChanges(db) - changesBefore;
  const steps = Math.max(0, fullScanSteps(db, sql) - scanBefore);
  const scanned = steps > 0 ? steps + 1 : 0;
  void hold;
  // Without a full scan, the rows came through an index or the rowid: the rows returned, or changed
  // by an update, delete or upsert (each read before it is changed).
  const found = Math.max(returned, /^\s*(update|delete)\b|\bon\s+conflict\b.*\bdo\s+update\b/is.test(sql) ? written : 0);
  return { result, rows: { read: scanned > 0 ? scanned : found, written } };
}
