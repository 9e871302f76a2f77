/**
 * A libSQL client that counts its round trips (execute, batch, transaction, migrate), for the
 * scale benchmark: on Turso each is one HTTP request, so the count is the Worker's database
 * subrequests for the same work.
 */
import type { Client } from "@libsql/client";

export interface CountingClient {
  client: Client;
  count(): number;
  log: string[];
}

export function countRoundTrips(inner: Client): CountingClient {
  let n = 0;
  const log: string[] = [];
  const counted = new Set(["execute", "batch", "migrate", "executeMultiple", "transaction"]);
  const client = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      if (counted.has(String(prop))) {
        return (...args: unknown[]) => {
          n++;
          const first = args[0] as { sql?: string } | string | unknown[];
          log.push(
            `${String(prop)} ${typeof first === "string" ? first : Array.isArray(first) ? `[${first.length}]` : (first?.sql ?? "")}`.slice(
              0,
              140,
            ),
          );
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
  return { client, count: () => n, log };
}
