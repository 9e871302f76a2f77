/**
 * The client of an embedded database (`file:` or `:memory:`, Node host): @libsql/client's `Client`
 * interface over one `libsql` connection that it opens and owns, keeping that connection's
 * prepared statements (db/statement-cache.ts).
 *
 * Why our own: @libsql/client prepares every statement anew, and making it keep them meant
 * patching the driver's `Database.prototype` — every libsql connection in the process, ours or
 * not. This client changes nothing outside itself. It behaves as @libsql/client 0.18's embedded
 * client with one connection (`concurrency: 1`, what the Node host used) does, for what drizzle's
 * libsql driver and this project call: `execute`, `batch` (one transaction, in the given mode),
 * `migrate`, `transaction`, `executeMultiple`, `close`, `reconnect`, `closed`, `protocol`; values,
 * rows and errors are converted alike (db/embedded-results.ts). Integers come back as numbers,
 * the interface's default `intMode`; `sync` reports no replica (there is none).
 *
 * Every call runs synchronously to completion once started, so calls never interleave on the
 * connection. An interactive transaction holds it until it commits, rolls back or closes; the
 * client refuses other calls meanwhile (TRANSACTION_ACTIVE) instead of queueing them behind it,
 * as @libsql/client's single-connection client does.
 */
import {
  LibsqlError,
  type Client,
  type InArgs,
  type InStatement,
  type ResultSet,
  type Transaction,
  type TransactionMode,
} from "@libsql/client";
import { begin, Connection, type BatchStatement, type EmbeddedOptions } from "./embedded-connection.ts";
import { EmbeddedTransaction } from "./embedded-transaction.ts";

export type { EmbeddedOptions } from "./embedded-connection.ts";

export class EmbeddedClient implements Client {
  // Plain fields, not getters: test and benchmark proxies read them through the proxy.
  closed = false;
  readonly protocol = "file";
  private connection: Connection | null;
  private holder: EmbeddedTransaction | null = null;

  constructor(
    private readonly path: string,
    private readonly options: EmbeddedOptions = {},
  ) {
    this.connection = new Connection(path, options);
  }

  async execute(stmt: InStatement, args?: InArgs): Promise<ResultSet> {
    return this.use().run(typeof stmt === "string" ? { sql: stmt, args: args ?? [] } : stmt);
  }

  async batch(stmts: BatchStatement[], mode: TransactionMode = "deferred"): Promise<ResultSet[]> {
    const connection = this.use();
    try {
      return connection.runAll(begin(mode), stmts);
    } finally {
      this.release();
    }
  }

  async migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    const connection = this.use();
    try {
      connection.run("PRAGMA foreign_keys=off");
      return connection.runAll(begin("deferred"), stmts);
    } finally {
      if (connection.db.open && connection.db.inTransaction) connection.run("ROLLBACK");
      connection.run("PRAGMA foreign_keys=on");
      this.release();
    }
  }

  async transaction(mode: TransactionMode = "write"): Promise<Transaction> {
    const connection = this.use();
    try {
      connection.run(begin(mode));
    } catch (error) {
      this.release();
      throw error;
    }
    const transaction = new EmbeddedTransaction(connection, () => {
      if (this.holder === transaction) this.holder = null;
      this.release();
    });
    this.holder = transaction;
    return transaction;
  }

  async executeMultiple(sql: string): Promise<void> {
    const connection = this.use();
    try {
      connection.exec(sql);
    } finally {
      this.release();
    }
  }

  async sync(): Promise<undefined> {
    this.use();
    return undefined;
  }

  reconnect(): void {
    this.connection?.close();
    this.connection = null;
    this.holder = null;
    this.closed = false;
  }

  close(): void {
    this.closed = true;
    this.holder = null;
    this.connection?.close();
    this.connection = null;
  }

  /** The connection for a call, opened again if a failed rollback or `reconnect` dropped it. */
  private use(): Connection {
    if (this.closed) throw new LibsqlError("The client is closed", "CLIENT_CLOSED");
    if (this.holder) {
      throw new LibsqlError(
        "This client has a single connection, which an open transaction is holding. Commit or roll back the transaction before using the client again.",
        "TRANSACTION_ACTIVE",
      );
    }
    return (this.connection ??= new Connection(this.path, this.options));
  }

  /** After a call: a transaction it left open is rolled back; a connection that cannot roll back is dropped. */
  private release(): void {
    const connection = this.connection;
    if (!connection || this.holder || !connection.db.open || !connection.db.inTransaction) return;
    try {
      connection.run("ROLLBACK");
    } catch {
      connection.close();
      this.connection = null;
    }
  }
}
