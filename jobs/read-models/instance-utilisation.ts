/**
 * Read model of one instance's GPU utilisation over the last 24 hours (instance_telemetry), thinned
 * to at most SPARK_POINTS samples, the last always kept: what the instance page's sparkline draws.
 */
import { and, asc, eq, gte, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../runtime/clock.ts";
import { DAY_MS } from "../../runtime/time.ts";
import { instanceTelemetry } from "../../schema/index.ts";

/** Samples drawn at most (a day of one-minute samples, thinned to every n-th). */
export const SPARK_POINTS = 288;

export interface UtilisationPoint {
  at: number;
  gpuUtil: number;
}

export async function loadUtilisation(deps: { db: Db; clock: Clock }, agentId: string, instanceId: string): Promise<UtilisationPoint[]> {
  const rows = await deps.db
    .select({ at: instanceTelemetry.at, gpuUtil: instanceTelemetry.gpuUtil })
    .from(instanceTelemetry)
    .where(
      and(
        eq(instanceTelemetry.agentId, agentId),
        eq(instanceTelemetry.instanceId, instanceId),
        gte(instanceTelemetry.at, deps.clock.now() - DAY_MS),
        isNotNull(instanceTelemetry.gpuUtil),
      ),
    )
    .orderBy(asc(instanceTelemetry.at));
  const every = Math.max(1, Math.ceil(rows.length / SPARK_POINTS));
  return rows.filter((_, i) => i % every === 0 || i === rows.length - 1).map((r) => ({ at: r.at, gpuUtil: r.gpuUtil! }));
}
