/**
 * The attention strip's economics reasons for one instance: idle (utilisation below
 * IDLE_GPU_UTIL_PCT since `idleSince`, on telemetry fresher than TELEMETRY_STALE_S: stale
 * telemetry is not evidence of idleness) and over budget (the agent spent its daily limit today
 * and the instance, which spent some of it, still costs money).
 */
import type { InstanceView } from "../fleet/list-instances.ts";
import type { Config } from "../runtime/config.ts";
import { dollars } from "./spend-panel.tsx";
import { overBudget, type Spend } from "./spend-data.ts";

/** Idle on fresh telemetry: the mark fleet/telemetry.ts keeps, believed only while recent. */
export function idleFor(i: InstanceView, now: number, economics: Pick<Config["economics"], "telemetryStaleMs">): number | null {
  if (i.gone || i.state !== "running" || !i.idleSince || !i.gpuUtilAt) return null;
  if (now - Date.parse(i.gpuUtilAt) > economics.telemetryStaleMs) return null;
  return now - Date.parse(i.idleSince);
}

export function economicReasons(i: InstanceView, now: number, economics: Pick<Config["economics"], "telemetryStaleMs">, spend: Spend): string[] {
  const reasons: string[] = [];
  const idle = idleFor(i, now, economics);
  if (idle !== null) reasons.push(`idle: GPU at ${i.gpuUtil ?? 0} % for ${Math.round(idle / 60_000)} min`);
  const spent = spend.byInstance.get(i.id) ?? 0;
  if (overBudget(spend) && !i.gone && (i.costPerHour ?? 0) > 0 && spent > 0) {
    reasons.push(`over budget: ${dollars(spent)} of the ${dollars(spend.today)} spent today (limit ${dollars(spend.limit!)})`);
  }
  return reasons;
}
