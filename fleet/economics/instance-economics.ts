/**
 * One instance's telemetry and spend as the agent's get_instance tool shows them: the latest GPU
 * utilisation and disk use, whether it is idle and the signal that decided it (fleet/economics/idle.ts),
 * what it costs per hour in its current state and its estimated spend today (fleet/economics/spend.ts),
 * and its progress counter with whether it is stalled (fleet/instances/stall.ts).
 * Read from fleetwarden's records in one batch, not from the provider.
 */
import { and, eq } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instanceSpend, instances } from "../../schema/index.ts";
import { iso, MINUTE_MS } from "../../runtime/time.ts";
import { idleState } from "./idle.ts";
import { stallSettings, stallState } from "../instances/stall.ts";
import { ratePerHour, round, utcDay } from "./spend.ts";

export async function instanceEconomics(deps: Pick<FleetDeps, "db" | "clock" | "config">, agentId: string, instanceId: string) {
  const { db } = deps;
  const now = deps.clock.now();
  const [[row], [spent]] = await db.batch([
    db
      .select()
      .from(instances)
      .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId))),
    db
      .select({ usd: instanceSpend.usd })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), eq(instanceSpend.day, utcDay(now)), eq(instanceSpend.instanceId, instanceId))),
  ]);
  if (!row) return null;
  const idle = idleState(row, now, deps.config.economics);
  const stall = stallState(row, now, stallSettings(deps.config));
  return {
    telemetry: {
      gpuUtil: row.gpuUtil,
      gpuUtilAt: iso(row.gpuUtilAt),
      diskUsedPct: row.diskUsedPct,
      source: row.telemetrySource,
      idle: { idle: idle.idle, forMinutes: Math.floor(idle.forMs / MINUTE_MS), signal: idle.signal },
      progress:
        row.progress === null
          ? null
          : {
              value: row.progress,
              at: iso(row.progressAt),
              lastMovedAt: iso(row.progressMovedAt),
              stalled: stall.stalled,
              forMinutes: Math.floor(stall.forMs / MINUTE_MS),
              signal: stall.signal,
            },
    },
    spend: { estimate: true, costPerHour: round(ratePerHour(row)), usdToday: round(spent?.usd ?? 0) },
  };
}
