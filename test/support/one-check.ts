/**
 * Each tick check run alone, as a tick of its own (`runTickCheck`): what tests call to drive one
 * check and read its report. The product runs the checks together, from one snapshot into one
 * write batch (jobs/tick.ts, pipeline/tick-plan.ts); these are here, not there, because only tests
 * run a check alone.
 */
import type { AgentDeps } from "../../agent/deps.ts";
import type { FleetDeps } from "../../fleet/deps.ts";
import { runTickCheck, type PipelineDeps } from "../../pipeline/index.ts";
import { checkLoopHealth } from "../../agent/watchdog/watchdog.ts";
import { checkHeartbeats } from "../../fleet/instances/heartbeat.ts";
import { checkOverdueStates } from "../../fleet/instances/overdue-states.ts";
import { reconcileInstances, type ReconcileReport } from "../../fleet/instances/reconcile.ts";
import { simulatorReports } from "../../fleet/providers/simulator-reports.ts";
import { repairStalledDeliveries } from "../../notify/repair-deliveries.ts";
import { checkEconomics, type EconomicsReport } from "../../fleet/economics/economics-check.ts";

/** Reconciliation alone; a provider failure is thrown. */
export function reconcileFleet(deps: FleetDeps, agentId: string): Promise<ReconcileReport> {
  return runTickCheck(deps, agentId, reconcileInstances);
}

/** The heartbeat check alone: the instances it flagged. */
export function flagSilentInstances(deps: FleetDeps, agentId: string): Promise<string[]> {
  return runTickCheck(deps, agentId, checkHeartbeats);
}

/** The overdue check alone: the instances it raised. */
export function raiseOverdueStates(deps: FleetDeps, agentId: string): Promise<string[]> {
  return runTickCheck(deps, agentId, checkOverdueStates);
}

/** The simulator's heartbeats and random failures alone. */
export function simulateFleet(deps: FleetDeps, agentId: string): Promise<void> {
  return runTickCheck<void, FleetDeps>(deps, agentId, simulatorReports);
}

/** The watchdog alone: the conditions it opened and closed. */
export function watchLoop(deps: AgentDeps, agentId: string): Promise<{ started: string[]; cleared: string[] }> {
  return runTickCheck(deps, agentId, checkLoopHealth);
}

/** The lost-publish repair alone: how many deliveries it published again. */
export function republishStalledDeliveries(deps: PipelineDeps, agentId: string): Promise<number> {
  return runTickCheck(deps, agentId, repairStalledDeliveries);
}

/** The economics check alone: spend accrued, its notices, idle stops and destroy requests. */
export function runEconomics(deps: FleetDeps, agentId: string): Promise<EconomicsReport> {
  return runTickCheck(deps, agentId, checkEconomics);
}
