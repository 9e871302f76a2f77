/**
 * What crosses between the `libsql` driver and the @libsql/client interface in the embedded
 * client (db/embedded-client.ts): bound values, rows, result sets and errors, converted exactly as
 * @libsql/client 0.18's own embedded client does (`lib-esm/sqlite3.js`, integer mode "number",
 * its default and the only one this project uses), so drizzle and our code read the same values
 * from either client. `test/db/embedded-client.test.ts` runs both side by side.
 */
import { LibsqlError, type InValue, type ResultSet, type Row, type Value } from "@libsql/client";
import Database from "libsql";

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_INTEGER = -9223372036854775808n;
const MAX_INTEGER = 9223372036854775807n;

/** A bound value as the driver takes it. */
export function valueToSql(value: InValue): unknown {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments");
    return value;
  }
  if (typeof value === "bigint") {
    if (value < MIN_INTEGER || value > MAX_INTEGER)
      throw new RangeError("bigint is too large to be represented as a 64-bit integer and passed as argument");
    return value;
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  // The driver takes any Uint8Array as a blob (a Buffer is one).
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Date) return value.valueOf();
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  return value;
}

/** Positional arguments as they are; named ones (or none given) without their `@`, `$` or `:` prefix. */
export function argsToSql(args: readonly InValue[] | Record<string, InValue> | undefined): unknown[] | Record<string, unknown> {
  if (Array.isArray(args)) return args.map(valueToSql);
  const named: Record<string, unknown> = {};
  for (const name in args) {
    const key = name[0] === "@" || name[0] === "$" || name[0] === ":" ? name.substring(1) : name;
    named[key] = valueToSql((args as Record<string, InValue>)[name]!);
  }
  return named;
}

/** Statements run with safe integers on: an integer arrives as a bigint and leaves as a number. */
function valueFromSql(value: unknown): Value {
  if (typeof value === "bigint") {
    if (value < MIN_SAFE || value > MAX_SAFE)
      throw new RangeError("Received integer which cannot be safely represented as a JavaScript number");
    return Number(value);
  }
  // A blob is a Buffer; the interface hands out its ArrayBuffer.
  if (value instanceof Uint8Array) return value.buffer as ArrayBuffer;
  return value as Value;
}

/**
 * A row as @libsql/client builds one: values by index and `length` (not enumerable: drizzle
 * slices rows with `Array.prototype.slice`), and by column name (enumerable: spreading a row or
 * `Object.keys` gives the columns), the first of two columns with one name winning.
 */
export function rowFromSql(values: readonly unknown[], columns: readonly string[]): Row {
  const row = {};
  Object.defineProperty(row, "length", { value: values.length });
  for (let i = 0; i < values.length; i++) {
    const value = valueFromSql(values[i]);
    Object.defineProperty(row, i, { value });
    const column = columns[i]!;
    if (!Object.hasOwn(row, column)) Object.defineProperty(row, column, { value, enumerable: true, configurable: true, writable: true });
  }
  return row as Row;
}

export class EmbeddedResultSet implements ResultSet {
  constructor(
    readonly columns: string[],
    readonly columnTypes: string[],
    readonly rows: Row[],
    readonly rowsAffected: number,
    readonly lastInsertRowid: bigint | undefined,
  ) {}

  toJSON() {
    return {
      columns: this.columns,
      columnTypes: this.columnTypes,
      rows: this.rows.map((row) => Array.prototype.map.call(row, valueToJson)),
      rowsAffected: this.rowsAffected,
      lastInsertRowid: this.lastInsertRowid !== undefined ? `${this.lastInsertRowid}` : null,
    };
  }
}

function valueToJson(value: unknown): unknown {
  if (typeof value === "bigint") return `${value}`;
  if (value instanceof ArrayBuffer) {
    let binary = "";
    for (const byte of new Uint8Array(value)) binary += String.fromCharCode(byte);
    return btoa(binary);
  }
  return value;
}

/** SQLite's primary result codes from 1 (`rawCode & 0xff`). */
const BASE_CODES = [
  "SQLITE_ERROR",
  "SQLITE_INTERNAL",
  "SQLITE_PERM",
  "SQLITE_ABORT",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_NOMEM",
  "SQLITE_READONLY",
  "SQLITE_INTERRUPT",
  "SQLITE_IOERR",
  "SQLITE_CORRUPT",
  "SQLITE_NOTFOUND",
  "SQLITE_FULL",
  "SQLITE_CANTOPEN",
  "SQLITE_PROTOCOL",
  "SQLITE_EMPTY",
  "SQLITE_SCHEMA",
  "SQLITE_TOOBIG",
  "SQLITE_CONSTRAINT",
  "SQLITE_MISMATCH",
  "SQLITE_MISUSE",
  "SQLITE_NOLFS",
  "SQLITE_AUTH",
  "SQLITE_FORMAT",
  "SQLITE_RANGE",
  "SQLITE_NOTADB",
  "SQLITE_NOTICE",
  "SQLITE_WARNING",
];

/**
 * A driver error as a LibsqlError: `code` the primary result code (`SQLITE_BUSY`,
 * `SQLITE_CONSTRAINT`), `extendedCode` the driver's (`SQLITE_CONSTRAINT_UNIQUE`), the message
 * prefixed with the code. Anything else passes unchanged.
 */
export function mapDriverError(error: unknown): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  const rawCode = error.rawCode;
  const base = rawCode === undefined ? undefined : rawCode & 0xff;
  const code = base === undefined ? "SQLITE_UNKNOWN" : ((base > 0 ? BASE_CODES[base - 1] : undefined) ?? `SQLITE_UNKNOWN_${base}`);
  return new LibsqlError(error.message, code, error.code, rawCode, error);
}
