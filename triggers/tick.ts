/**
 * The cron tick with its fleet checks and retention wired in: the one function the Worker's
 * `scheduled` handler, the Node interval and `POST /api/cron` all call.
 */
import type { Deps } from "../runtime/deps.ts";
import { cronTick, type TickCheck } from "./cron-tick.ts";
import { simulateFleet } from "../fleet/simulator-reports.ts";
import { reconcileInstances } from "../fleet/reconcile.ts";
import { checkHeartbeats } from "../fleet/heartbeat.ts";
import { checkOverdueStates } from "../fleet/overdue-states.ts";
import { checkMissedHeartbeats } from "../fleet/heartbeat-escalation.ts";
import { republishStalledDeliveries } from "../notify/repair-deliveries.ts";
import { notifyPoisonDrops } from "../notify/poison-alerts.ts";
import { pruneOldRecords } from "./retention.ts";
import { checkLoopHealth } from "../agent/watchdog/watchdog.ts";

/** Fleet checks run by every tick, after the pipeline's own repairs. */
// Order matters: simulated failures report first (as webhooks), reconciliation then records only
// what no report told, and the heartbeat check sees the freshest last-seen times.
// Then poison drops are announced and notification deliveries whose publish was lost are published
// again; last, the watchdog looks at the loop itself, after everything above had its chance to
// repair it. Overdue states are judged after reconciliation, so an instance that did come up is not raised.
export const FLEET_CHECKS: readonly TickCheck[] = [
  simulateFleet,
  reconcileInstances,
  checkHeartbeats,
  checkMissedHeartbeats,
  checkOverdueStates,
  notifyPoisonDrops,
  republishStalledDeliveries,
  checkLoopHealth,
];

export async function runCronTick(deps: Deps) {
  const agents = await cronTick(deps, FLEET_CHECKS);
  await pruneOldRecords(deps).catch((err: unknown) => deps.log.error("pruning old records failed", { error: String(err) }));
  return agents;
}
