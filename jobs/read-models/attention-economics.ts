/**
 * The attention strip's economics reasons for one instance: idle (fleet/economics/idle.ts decides, the one
 * home of the rule the economics check acts on) and over budget (the agent spent its daily limit
 * today and the instance, which spent some of it, still costs money).
 */
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import { idleState, type IdleSettings } from "../../fleet/economics/idle.ts";
import { dollars, overBudget, type Spend } from "./spend.ts";

const ms = (at: string | null) => (at === null ? null : Date.parse(at));

/** How long the listed instance has been idle by fleet/economics/idle.ts's rule, or null when it is not. */
export function idleFor(i: InstanceView, now: number, economics: IdleSettings): number | null {
  const idle = idleState(
    { state: i.gone ? "gone" : i.state, gpuUtil: i.gpuUtil, gpuUtilAt: ms(i.gpuUtilAt), idleSince: ms(i.idleSince), telemetrySource: null },
    now,
    economics,
  );
  return idle.idle ? idle.forMs : null;
}

export function economicReasons(i: InstanceView, now: number, economics: IdleSettings, spend: Spend): string[] {
  const reasons: string[] = [];
  const idle = idleFor(i, now, economics);
  if (idle !== null) reasons.push(`idle: GPU at ${i.gpuUtil ?? 0} % for ${Math.round(idle / 60_000)} min`);
  const spent = spend.byInstance.get(i.id) ?? 0;
  if (overBudget(spend) && !i.gone && (i.costPerHour ?? 0) > 0 && spent > 0) {
    reasons.push(`over budget: ${dollars(spent)} of the ${dollars(spend.today)} spent today (limit ${dollars(spend.limit!)})`);
  }
  return reasons;
}
