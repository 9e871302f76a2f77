/**
 * batchByName: one database batch (one transaction, one round trip where the driver allows)
 * whose statements and results are named, so callers read `results.takeLease`, not
 * `results[4]`, and inserting a statement cannot silently shift what another one reads.
 * Statements run in the order the names are given.
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client.ts";

export type NamedStatements = Record<string, BatchItem<"sqlite">>;
export type NamedResults<T extends NamedStatements> = { [K in keyof T]: Awaited<T[K]> };

export async function batchByName<T extends NamedStatements>(db: Db, statements: T): Promise<NamedResults<T>> {
  const names = Object.keys(statements);
  const items = names.map((name) => statements[name]!);
  if (items.length === 0) return {} as NamedResults<T>;
  const results = await db.batch(items as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  return Object.fromEntries(names.map((name, i) => [name, results[i]])) as NamedResults<T>;
}
