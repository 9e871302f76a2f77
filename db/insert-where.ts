/**
 * INSERT … SELECT of one row, written only where a condition holds (a run's fence, a cap, the
 * batch that stored an event). drizzle's insert-select takes a select of every column of the
 * table, in the table's order; `rowOf` builds it from the values a writer names, bound with their
 * column's encoding (JSON, booleans), and gives every other column its default or null. Columns
 * are named by the table's definition, so a renamed column breaks the build where a hand-written
 * column list would have kept compiling.
 */
import { getTableColumns, is, sql, SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteInsertSelectQueryBuilder, SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client.ts";

/** Every column of `T` as a select field, as drizzle's insert-select wants them. */
export type RowFields<T extends SQLiteTable> = { [K in keyof T["$inferInsert"]]-?: SQL };

/** The column's default as drizzle's own insert would write it; null without one. */
function defaultOf(column: SQLiteColumn): SQL {
  if (column.default !== null && column.default !== undefined) {
    return is(column.default, SQL) ? column.default : sql`${sql.param(column.default, column)}`;
  }
  if (column.defaultFn !== undefined) {
    const value = column.defaultFn();
    return is(value, SQL) ? value : sql`${sql.param(value, column)}`;
  }
  return sql`null`;
}

/**
 * One row of `table` as select fields: each named value as SQL (given as SQL, or bound with its
 * column's encoding; a placeholder too), the other columns' defaults.
 */
export function rowOf<T extends SQLiteTable>(table: T, values: SQLiteInsertValue<T>): RowFields<T> {
  const given = values as Record<string, unknown>;
  const row: Record<string, SQL> = {};
  for (const [key, column] of Object.entries(getTableColumns(table)) as [string, SQLiteColumn][]) {
    const value = given[key];
    row[key] = value === undefined ? defaultOf(column) : is(value, SQL) ? value : sql`${sql.param(value, column)}`;
  }
  return row as RowFields<T>;
}

/**
 * `insert into table select <row> from (select 1) where condition`: the row is written only when
 * `condition` holds. Chain `onConflictDoNothing`, `onConflictDoUpdate` or `returning` as on any
 * insert (the WHERE it always has is also what SQLite needs to parse an upsert of a SELECT).
 * `from` replaces `(select 1)` when the values read rows (one row is written per row it yields).
 */
export function insertWhere<T extends SQLiteTable>(
  db: Db,
  table: T,
  values: SQLiteInsertValue<T>,
  condition: SQL,
  from: SQL = sql`(select 1)`,
) {
  const select = db.select(rowOf(table, values)).from(from).where(condition);
  return db.insert(table).select(select as unknown as SQLiteInsertSelectQueryBuilder<T>);
}
