/**
 * batchByName: one database batch (one transaction, one round trip where the driver allows)
 * whose statements and results are named, so callers read `results.takeLease`, not
 * `results[4]`, and inserting a statement cannot silently shift what another one reads.
 * Statements run in the order the names are given. `namedBatch` is the same mapping for a batch
 * committed elsewhere (group commit, the cron tick's write batch): the one place names become
 * positions.
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client.ts";

export type NamedStatements = Record<string, BatchItem<"sqlite">>;
/** Each statement's result under its name (as drizzle's BatchResponse types them by position). */
export type NamedResults<T extends NamedStatements> = { [K in keyof T]: T[K]["_"]["result"] };

/**
 * Named statements as a batch's items, in order, and the reader of that batch's results by name.
 * Results past the named statements (statements a caller appended after them) are left out.
 */
export function namedBatch<T extends NamedStatements>(statements: T) {
  const names = Object.keys(statements);
  return {
    items: names.map((name) => statements[name]!),
    results: (results: readonly unknown[]) => Object.fromEntries(names.map((name, i) => [name, results[i]])) as NamedResults<T>,
  };
}

export async function batchByName<T extends NamedStatements>(db: Db, statements: T): Promise<NamedResults<T>> {
  const batch = namedBatch(statements);
  if (batch.items.length === 0) return {} as NamedResults<T>;
  return batch.results(await db.batch(batch.items as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]));
}
