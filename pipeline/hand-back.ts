/**
 * Hand-back: the events and wakes a run consumed go back to pending, each with `attempts + 1`,
 * when that run cannot finish them: it failed (finishRun, in its finish batch, only while it still
 * holds its lease) or it died with its lease (recovery, pipeline/lease.ts). The claim counts those
 * attempts to drop poison (invariant 9), so this is the one place that counts them.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { events, wakes } from "../schema/index.ts";

/**
 * The hand-back of run `runId`'s events and wakes (a run id, or SQL naming one: the dead lease's),
 * as the named statements of a caller's batch; `alsoIf` guards both (finish: the run holds its lease).
 */
export function handBackStatements(db: Db, agentId: string, runId: number | SQL, alsoIf?: SQL) {
  return {
    handBackEvents: db
      .update(events)
      .set({ status: "pending", runId: null, consumedAt: null, attempts: sql`${events.attempts} + 1` })
      .where(and(eq(events.agentId, agentId), eq(events.status, "consumed"), eq(events.runId, runId), alsoIf)),
    handBackWakes: db
      .update(wakes)
      .set({ status: "pending", consumedByRun: null, consumedAt: null, attempts: sql`${wakes.attempts} + 1` })
      .where(and(eq(wakes.agentId, agentId), eq(wakes.status, "consumed"), eq(wakes.consumedByRun, runId), alsoIf)),
  };
}
