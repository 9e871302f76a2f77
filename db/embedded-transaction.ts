/**
 * An interactive transaction of the embedded client (db/embedded-client.ts), as @libsql/client's
 * embedded transaction behaves: it holds the client's one connection from BEGIN until it commits,
 * rolls back or closes, then gives it back (once, whichever way it ended).
 */
import { LibsqlError, type InArgs, type InStatement, type ResultSet, type Transaction } from "@libsql/client";
import { batchError, type Connection } from "./embedded-connection.ts";

/** An interactive transaction: it holds the client's connection until it ends. */
export class EmbeddedTransaction implements Transaction {
  constructor(
    private connection: Connection | null,
    private readonly settled: () => void,
  ) {}

  get closed(): boolean {
    const connection = this.connection;
    return connection === null || !connection.db.open || !connection.db.inTransaction;
  }

  async execute(stmt: InStatement, args?: InArgs): Promise<ResultSet> {
    return this.use().run(typeof stmt === "string" ? { sql: stmt, args: args ?? [] } : stmt);
  }

  async batch(stmts: InStatement[]): Promise<ResultSet[]> {
    const results: ResultSet[] = [];
    for (let i = 0; i < stmts.length; i++) {
      try {
        results.push(this.use().run(stmts[i]!));
      } catch (error) {
        throw batchError(error, i);
      }
    }
    return results;
  }

  async executeMultiple(sql: string): Promise<void> {
    this.use().exec(sql);
  }

  async rollback(): Promise<void> {
    const connection = this.connection;
    if (connection === null || !connection.db.open) return this.settle();
    try {
      this.use().run("ROLLBACK");
    } finally {
      this.settle();
    }
  }

  async commit(): Promise<void> {
    try {
      this.use().run("COMMIT");
    } finally {
      this.settle();
    }
  }

  close(): void {
    const connection = this.connection;
    if (connection === null) return;
    try {
      if (connection.db.open && connection.db.inTransaction) connection.run("ROLLBACK");
    } finally {
      this.settle();
    }
  }

  private use(): Connection {
    if (this.closed) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
    return this.connection!;
  }

  /** Gives the connection back to the client, once. */
  private settle(): void {
    if (this.connection === null) return;
    this.connection = null;
    this.settled();
  }
}
