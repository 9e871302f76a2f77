/**
 * The overview's control for the fleet breaker (issue #33 item 9): while the watchdog shows
 * `fleet_breaker_open` and no human has lifted this episode, an operator gets a Lift form, the
 * dashboard's counterpart of POST /api/agents/:agent/fleet-breaker/lift (jobs/lift-fleet-breaker.ts:
 * one lift per episode, audited as `fleet_breaker_lift`).
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { liftFleetBreakerAsOperator } from "../../jobs/lift-fleet-breaker.ts";
import type { HealthCondition } from "../../agent/watchdog/watchdog.ts";
import { FLEET_BREAKER_CONDITION, LIFTED_NOTE } from "../../fleet/actions/fleet-breaker.ts";
import { agentPath } from "../shell/agent-links.ts";
import { CsrfField } from "../shell/layout.tsx";
import { selectedAgentId } from "../shell/selected-agent.tsx";

export function BreakerLift({ conditions, csrf }: { conditions: readonly HealthCondition[]; csrf: string }) {
  const open = conditions.find((c) => c.kind === FLEET_BREAKER_CONDITION);
  if (!open || open.detail.includes(LIFTED_NOTE)) return null;
  return (
    <form method="post" action="/fleet-breaker/lift" data-testid="breaker-lift">
      <CsrfField token={csrf} />
      <p class="muted">
        The fleet breaker holds automatic restarts, replacements and destroys. Lift it if the instances, not the provider, are at fault:
        remediation runs again until the share falls back, and the next outage is held again.
      </p>
      <button type="submit" class="danger">
        Lift the fleet breaker
      </button>
    </form>
  );
}

/** POST /fleet-breaker/lift (operator): lifts the open episode's hold, then back to the overview. */
export async function postBreakerLift(c: Context<AppEnv>) {
  const agentId = selectedAgentId(c);
  await liftFleetBreakerAsOperator(c.get("deps"), c.get("operator"), agentId);
  return c.redirect(agentPath("/?done=breaker-lifted", agentId), 303);
}
