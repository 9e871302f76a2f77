/**
 * The attention strip's economics: per instance, idle (fleet/economics/idle.ts decides, the one
 * home of the rule the economics check acts on); once for the agent, over budget (the agent spent
 * its daily limit today), naming the instances that spent some of it and still cost money. Over
 * budget is the agent's fact, not an instance's: it is said once, not on every instance.
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

export function economicReasons(i: InstanceView, now: number, economics: IdleSettings): string[] {
  const idle = idleFor(i, now, economics);
  return idle !== null ? [`idle: GPU at ${i.gpuUtil ?? 0} % for ${Math.round(idle / 60_000)} min`] : [];
}

/** The agent over its daily limit: what it spent, the limit, and the instances still spending (null when under it). */
export interface OverBudget {
  today: number;
  limit: number;
  /** Live instances that spent today and still cost money, by what they spent, most first. */
  spending: { id: string; spent: number }[];
}

export function overBudgetFact(fleet: readonly InstanceView[], spend: Spend): OverBudget | null {
  if (!overBudget(spend)) return null;
  const spending = fleet
    .filter((i) => !i.gone && (i.costPerHour ?? 0) > 0 && (spend.byInstance.get(i.id) ?? 0) > 0)
    .map((i) => ({ id: i.id, spent: spend.byInstance.get(i.id)! }))
    .sort((a, b) => b.spent - a.spent || a.id.localeCompare(b.id));
  return { today: spend.today, limit: spend.limit!, spending };
}

/** The strip's one line about it. */
export function overBudgetLine(over: OverBudget): string {
  const still = over.spending.length
    ? ` Still spending: ${over.spending.map((i) => `${i.id} (${dollars(i.spent)} today)`).join(", ")}.`
    : " Nothing is spending now.";
  return `Over budget: ${dollars(over.today)} spent today (UTC) of the ${dollars(over.limit)} daily limit.${still}`;
}
