/**
 * A real libSQL client that counts the calls made through it (each execute or batch is one round
 * trip to the database) and the statements they carried, so tests can bound a path's round trips.
 */
import type { Client } from "@libsql/client";

export interface CallCounter {
  calls: number;
  statements: number;
  reset(): void;
}

export function countingClient(inner: Client): { client: Client; counter: CallCounter } {
  const counter: CallCounter = {
    calls: 0,
    statements: 0,
    reset() {
      this.calls = 0;
      this.statements = 0;
    },
  };
  const client = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "execute") {
        return (...args: Parameters<Client["execute"]>) => {
          counter.calls++;
          counter.statements++;
          return (target.execute as (...a: unknown[]) => unknown)(...args);
        };
      }
      if (prop === "batch") {
        return (stmts: Parameters<Client["batch"]>[0], mode?: Parameters<Client["batch"]>[1]) => {
          counter.calls++;
          counter.statements += stmts.length;
          return target.batch(stmts, mode);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { client, counter };
}
