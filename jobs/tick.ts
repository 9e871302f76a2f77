/**
 * The cron tick, fanned out per agent. The scheduled entry points (the Worker's `scheduled`
 * handler, the Node interval) call `fanOutTick`: it lists the active (non-archived) agents and
 * publishes one `tick` delivery per agent (dedup key per agent and minute; on QStash in one batch
 * request per 100 agents), so each agent's recovery, reconciliation and heartbeat checks run in
 * their own invocation and no invocation's cost grows with the number of agents. `tickAgent` is what a tick delivery does.
 * `runCronTick` (POST /api/cron, tests) runs the same per-agent ticks inline, one after another,
 * and answers their reports.
 */
import type { Deps } from "./deps.ts";
import { MINUTE_MS } from "../runtime/time.ts";
import { agentTick, rebaseWakesOnClockStep, type AgentTick } from "../pipeline/index.ts";
import type { AnyTickCheck, PipelineDeps } from "../pipeline/index.ts";
import { simulatorReports } from "../fleet/providers/simulator-reports.ts";
import { reconcileInstances } from "../fleet/instances/reconcile.ts";
import { checkHeartbeats } from "../fleet/instances/heartbeat.ts";
import { checkOverdueStates } from "../fleet/instances/overdue-states.ts";
import { checkMissedHeartbeats } from "../fleet/instances/heartbeat-escalation.ts";
import { checkStalls } from "../fleet/instances/stall-check.ts";
import { rereadSilentInstances } from "../fleet/instances/heartbeat-reread.ts";
import { checkEconomics } from "../fleet/economics/economics-check.ts";
import { checkBalance } from "../fleet/economics/balance-check.ts";
import { checkDigest } from "../fleet/economics/digest-check.ts";
import { checkReplacements } from "../fleet/replacement/replacement-check.ts";
import { proposeDueReplacements } from "../fleet/replacement/replacement-due.ts";
import { followUpApprovals } from "../fleet/actions/approval-followup.ts";
import { repairStalledDeliveries } from "../notify/repair-deliveries.ts";
import { announcePoisonDrops } from "../notify/poison-alerts.ts";
import { listActiveAgentIds } from "../pipeline/index.ts";
import { pruneOldRecords } from "../pipeline/index.ts";
import { checkLoopHealth } from "../agent/watchdog/watchdog.ts";
import { withAgent } from "./with-agent.ts";
import { checkLeaseExpiry } from "../fleet/leases/lease-expiry.ts";
import { checkOrphans } from "../fleet/leases/orphans.ts";
import { publishAll } from "../pipeline/index.ts";

/** Fleet checks run by every tick, after the pipeline's own repairs (pipeline/tick-plan.ts runs them). */
// Order matters: simulated failures report first (as webhooks), reconciliation then records only
// what no report told, and the heartbeat check reads the last-seen times the simulator's heartbeats
// refreshed earlier in the same snapshot. The checks after reconciliation leave the instances it
// recorded to the next tick, so an instance that did come up is not raised as overdue. The
// economics check accrues spend and raises its once-notices from the same snapshot. Then poison
// drops are announced and notification deliveries whose publish was lost are published again; the
// watchdog reads the loop's state in the same snapshot (after the dead lease was freed), so what
// this tick itself writes it sees on the next tick.
export const FLEET_CHECKS: readonly AnyTickCheck[] = [
  simulatorReports,
  reconcileInstances,
  checkHeartbeats,
  checkMissedHeartbeats,
  checkOverdueStates,
  checkEconomics,
  // Its provider call runs after the write batch, bounded to one per 10 minutes.
  checkBalance,
  // At most one daily digest per agent and UTC day (its once-mark), from the hour it is set for.
  checkDigest,
  checkReplacements,
  proposeDueReplacements,
  followUpApprovals,
  announcePoisonDrops,
  repairStalledDeliveries,
  checkLoopHealth,
  // Stalled progress (fleet/instances/stall-check.ts): at most 20 instances a tick, once per stall episode.
  checkStalls,
  // Silent webhook reporters re-read from the provider after the batch: at most 10 a tick, one per silence episode.
  rereadSilentInstances,
  // Leases past their end: told, stopped after LEASE_GRACE_S (at most 20 per tick).
  checkLeaseExpiry,
  // Orphans told once a day (one account list per 10 min, at most 20 notices per tick).
  checkOrphans,
];

/** One agent's tick with its settings applied; null (nothing done) for an archived or unknown agent. */
export async function tickAgent(deps: Deps, agentId: string): Promise<AgentTick | null> {
  const scope = await withAgent(deps, agentId);
  if (!scope || scope.archived) return null;
  return agentTick(scope.deps, agentId, FLEET_CHECKS);
}

/**
 * The scheduled tick: one `tick` delivery per active agent, then the global retention pass.
 * What stops it repeating: the dedup key `tick:{agent}:{minute}` drops a second fan-out within the
 * same minute, and a tick delivery publishes no tick.
 */
export async function fanOutTick(deps: PipelineDeps): Promise<string[]> {
  // A backward step of the wall clock moves pending wakes back with it (pipeline/wakes.ts).
  await rebaseWakesOnClockStep(deps);
  const agentIds = await listActiveAgentIds(deps.db);
  await publishTicks(deps, agentIds, deps.clock.now());
  await prune(deps);
  return agentIds;
}

/** One `tick` delivery per agent, deduplicated per agent and minute (batched on QStash). */
export function publishTicks(deps: Pick<Deps, "scheduler">, agentIds: readonly string[], now: number): Promise<void> {
  const minute = Math.floor(now / MINUTE_MS);
  return publishAll(
    deps.scheduler,
    agentIds.map((agentId) => ({ dedupKey: `tick:${agentId}:${minute}`, notBefore: now, body: { type: "tick", agentId } })),
  );
}

/** Every active agent's tick in this invocation (POST /api/cron, tests), then retention. */
export async function runCronTick(deps: Deps): Promise<AgentTick[]> {
  const report: AgentTick[] = [];
  // A backward step of the wall clock moves pending wakes back with it (pipeline/wakes.ts).
  await rebaseWakesOnClockStep(deps);
  for (const agentId of await listActiveAgentIds(deps.db)) {
    const tick = await tickAgent(deps, agentId);
    if (tick) report.push(tick);
  }
  await prune(deps);
  return report;
}

/** The global retention pass; a failure is logged, never thrown. */
export function prune(deps: PipelineDeps) {
  return pruneOldRecords(deps).catch((err: unknown) => deps.log.error("pruning old records failed", { error: String(err) }));
}
