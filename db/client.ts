/**
 * The one database factory. Hosts hand in the libSQL client they can run (embedded `file:` or
 * `:memory:` under Node, `@libsql/client/web` for Turso under Workers); everything else receives
 * the drizzle handle built here, created once per process or isolate, never per request.
 */
import type { Client } from "@libsql/client";
// The web driver, not drizzle-orm/libsql: the latter imports the Node client, which Workers cannot
// bundle. Given a client instance, both only wrap it, so Node's embedded client works here too.
import { drizzle } from "drizzle-orm/libsql/web";
import type { LibSQLDatabase } from "drizzle-orm/libsql";
import { sql } from "drizzle-orm";
import * as schema from "../schema/index.ts";
import { CASING } from "./casing.ts";

export type Db = LibSQLDatabase<typeof schema> & { $client: Client };

export function openDatabase(client: Client): Db {
  return drizzle(client, { schema, casing: CASING }) as Db;
}

/** A real round trip, for health checks. */
export async function pingDatabase(db: Db): Promise<boolean> {
  try {
    await db.run(sql`select 1`);
    return true;
  } catch {
    return false;
  }
}
