/**
 * A human lifting the fleet breaker's hold (issue #33 item 9): POST
 * /api/agents/:agent/fleet-breaker/lift and the overview's Lift form. The rule and the once mark
 * live in fleet/actions/fleet-breaker.ts; this adds who lifted it to the activity log
 * (`fleet_breaker_lift`, subject the episode). Bounded: one lift per open episode (a second, or a
 * lift with none open, is a 409 and logs nothing); the next episode is held again.
 */
import type { Deps } from "./deps.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { liftFleetBreaker } from "../fleet/actions/fleet-breaker.ts";
import { iso } from "../runtime/time.ts";

export interface BreakerLift {
  agentId: string;
  /** The watchdog row of the episode lifted. */
  episode: number;
  since: string;
  liftedBy: string;
  liftedAt: string;
}

export async function liftFleetBreakerAsOperator(deps: Deps, who: Principal, agentId: string): Promise<BreakerLift> {
  const now = deps.clock.now();
  const { conditionId, since } = await liftFleetBreaker(deps, agentId);
  await recordActivity(deps.db, who, { action: "fleet_breaker_lift", agentId, subject: `episode #${conditionId}`, at: now });
  return { agentId, episode: conditionId, since: iso(since), liftedBy: who.name, liftedAt: iso(now) };
}
