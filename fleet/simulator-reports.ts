/**
 * How the simulated instances speak to fleetwarden, the way real ones do: a failure is reported
 * at once as an instance webhook would be (recordInstanceState, source "webhook", to every agent,
 * so the agent hears within the state debounce window), and a healthy running instance sends a
 * heartbeat on every cron tick. A failed, stuck or offline instance sends none, so the heartbeat
 * check notices it the way it would notice a real one. Nothing here runs unless the provider is
 * the simulator.
 */
import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { instances } from "../schema/index.ts";
import { listActiveAgentIds } from "../triggers/agents.ts";
import type { TickCheck } from "../triggers/cron-tick.ts";
import { recordInstanceState, type RecordedChange } from "./instance-state.ts";
import type { FleetInstance } from "./provider.ts";
import { SimulatorProvider, type FailureKind } from "./simulator.ts";
import { ScopedProvider } from "./scoped-provider.ts";

export class NotSimulatedError extends Error {
  readonly status = 409;
  constructor(kind: string) {
    super(`the fleet is not simulated: the provider is ${kind}`);
    this.name = "NotSimulatedError";
  }
}

export interface AgentReport extends RecordedChange {
  agentId: string;
}

function simulator(deps: Deps): SimulatorProvider | null {
  const provider = deps.provider instanceof ScopedProvider ? deps.provider.inner : deps.provider;
  return provider instanceof SimulatorProvider ? provider : null;
}

/** Reports the instance's current state to every agent, as its webhook would. */
async function reportToAgents(deps: Deps, instance: FleetInstance, dedupKey: string): Promise<AgentReport[]> {
  const reports: AgentReport[] = [];
  for (const agentId of await listActiveAgentIds(deps.db)) {
    const recorded = await recordInstanceState(deps, {
      agentId,
      instanceId: instance.id,
      state: instance.state,
      message: instance.statusMessage,
      source: "webhook",
      dedupKey,
    });
    reports.push({ agentId, ...recorded });
  }
  return reports;
}

/**
 * Injects a scripted failure and reports it. Throws NotSimulatedError (409) when the provider is
 * not the simulator; returns null when the simulated fleet has no such instance.
 */
export async function injectSimulatorFailure(
  deps: Deps,
  instanceId: string,
  kind: FailureKind,
): Promise<{ instance: FleetInstance; reports: AgentReport[] } | null> {
  const sim = simulator(deps);
  if (!sim) throw new NotSimulatedError(deps.provider.kind);
  const instance = await sim.injectFailure(instanceId, kind);
  if (!instance) return null;
  const reports = await reportToAgents(deps, instance, `sim:${instance.id}:${kind}:${deps.clock.now()}`);
  return { instance, reports };
}

/** Cron check: roll random failures (SIMULATOR_FAILURE_RATE per instance per hour), then heartbeats. */
export const simulateFleet: TickCheck = async function simulateFleet(deps, agentId) {
  const sim = simulator(deps);
  if (!sim) return;
  const now = deps.clock.now();
  for (const { kind, instance } of await sim.rollFailures(deps.config.simulator.failureRatePerHour)) {
    deps.log.info("simulated failure", { instanceId: instance.id, kind });
    await reportToAgents(deps, instance, `sim:${instance.id}:${kind}:${now}`);
  }
  const alive = (await sim.listHeartbeating()).map((i) => i.id);
  if (!alive.length) return;
  // A heartbeat says "still running": it refreshes an instance fleetwarden already knows as
  // running; a state it does not know yet is reconciliation's to record, with an event.
  await deps.db
    .update(instances)
    .set({ lastSeenAt: now, heartbeatFlaggedAt: null, reportsByWebhook: true })
    .where(
      and(eq(instances.agentId, agentId), inArray(instances.id, alive), eq(instances.state, "running"), isNull(instances.goneAt)),
    );
};
