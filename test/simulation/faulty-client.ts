/**
 * Wraps a libSQL client so the simulation can inject database errors: before the statement runs
 * (nothing happened) or after it committed (the caller sees an error for work that was done, the
 * nastier case). Everything else passes through to the real client.
 */
import type { Client } from "@libsql/client";
import type { Rng } from "./rng.ts";

export interface FaultSwitch {
  /** Probability that one execute/batch call fails while faults are on. */
  rate: number;
  on: boolean;
  injected: number;
}

export function faultyClient(client: Client, rng: Rng, faults: FaultSwitch): Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if ((prop !== "execute" && prop !== "batch") || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        if (!faults.on || !rng.chance(faults.rate)) return value.apply(target, args);
        faults.injected++;
        if (rng.chance(0.5)) throw new Error("injected database fault (before commit)");
        await value.apply(target, args);
        throw new Error("injected database fault (after commit)");
      };
    },
  });
}
