/**
 * How the simulated instances speak to fleetwarden, the way real ones do: a failure is reported
 * at once as an instance webhook would be (recordInstanceState, source "webhook", to every agent,
 * so the agent hears within the state debounce window), and a healthy running instance sends a
 * heartbeat on every cron tick. A failed, stuck or offline instance sends none, so the heartbeat
 * check notices it the way it would notice a real one. Nothing here runs unless the provider is
 * the simulator. A report carries the instance's utilisation as a telemetry sample and, for an
 * outbid stop, `reason: "outbid"`.
 */
import { and, eq, inArray, isNull } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { agents, instances } from "../../schema/index.ts";
import { listActiveAgentIds } from "../../pipeline/index.ts";
import { defineTickCheck, writesNothing, type TickStatement } from "../../pipeline/index.ts";
import { GroupCommit } from "../../db/group-commit.ts";
import { recordInstanceState, type RecordedChange } from "../instances/instance-state.ts";
import type { FleetInstance } from "./provider.ts";
import { failuresWritten, SimulatorProvider } from "./simulator.ts";
import type { FailureKind } from "./simulated-failures.ts";
import { ScopedProvider } from "./scoped-provider.ts";

/** The fleet is not the simulator; jobs/inject-failure.ts answers it as a 409 for the caller. */
export class NotSimulatedError extends Error {
  constructor(kind: string) {
    super(`the fleet is not simulated: the provider is ${kind}`);
    this.name = "NotSimulatedError";
  }
}

export interface AgentReport extends RecordedChange {
  agentId: string;
}

function simulator(deps: Pick<FleetDeps, "provider">): SimulatorProvider | null {
  const provider = deps.provider instanceof ScopedProvider ? deps.provider.inner : deps.provider;
  return provider instanceof SimulatorProvider ? provider : null;
}

/**
 * Reports each failure's state to every agent, as its webhook would; all reports share one
 * database batch (each still its own idempotent ingest, committed through a group commit).
 */
async function reportToAgents(
  deps: FleetDeps,
  failures: { instance: FleetInstance; dedupKey: string }[],
  agentIds?: string[],
): Promise<AgentReport[]> {
  if (!failures.length) return [];
  const to = agentIds ?? (await listActiveAgentIds(deps.db));
  const reports = failures.flatMap(({ instance, dedupKey }) => to.map((agentId) => ({ agentId, instance, dedupKey })));
  if (!reports.length) return [];
  const shared: FleetDeps = { ...deps, groupCommit: new GroupCommit(deps.db, { windowMs: 0, maxRequests: reports.length }) };
  return Promise.all(
    reports.map(async ({ agentId, instance, dedupKey }) => ({
      agentId,
      ...(await recordInstanceState(shared, {
        agentId,
        instanceId: instance.id,
        state: instance.state,
        message: instance.statusMessage,
        source: "webhook",
        dedupKey,
        // What a webhook would not say but the simulated provider knows: its economics.
        details: {
          storagePerHour: instance.storagePerHour ?? null,
          endsAt: instance.endsAt ?? null,
          interruptible: instance.interruptible ?? null,
        },
        telemetry: { gpuUtil: instance.gpuUtil, diskUsedPct: instance.diskUsedPct, source: "simulator" },
        reason: instance.stopReason ?? null,
      })),
    })),
  );
}

/**
 * Injects a scripted failure and reports it. Throws NotSimulatedError when the provider is
 * not the simulator; returns null when the simulated fleet has no such instance.
 */
export async function injectSimulatorFailure(
  deps: FleetDeps,
  instanceId: string,
  kind: FailureKind,
): Promise<{ instance: FleetInstance; reports: AgentReport[] } | null> {
  const sim = simulator(deps);
  if (!sim) throw new NotSimulatedError(deps.provider.kind);
  const instance = await sim.injectFailure(instanceId, kind);
  if (!instance) return null;
  const reports = await reportToAgents(deps, [{ instance, dedupKey: `sim:${instance.id}:${kind}:${deps.clock.now()}` }]);
  return { instance, reports };
}

/**
 * The tick's simulator check. In the snapshot: the healthy instances' heartbeats (one statement,
 * so the heartbeat check reads fresh last-seen times) and, at a non-zero SIMULATOR_FAILURE_RATE,
 * the whole account's random-failure windows read and claimed (one statement each) with the agents
 * to report to. The roll itself is decided in memory; only the instances that fail are written, in
 * the tick's write batch, and reported to every agent as webhooks would be (one more batch, only
 * when something failed).
 */
export const simulatorReports = defineTickCheck({
  name: "simulateFleet",
  reads(deps: FleetDeps, agentId: string, now: number): Record<string, TickStatement> {
    const sim = simulator(deps);
    if (!sim) return {};
    // A heartbeat says "still running": it refreshes an instance fleetwarden already knows as
    // running; a state it does not know yet is reconciliation's to record, with an event.
    const heartbeats = deps.db
      .update(instances)
      .set({ lastSeenAt: now, heartbeatFlaggedAt: null, reportsByWebhook: true })
      .where(
        and(
          eq(instances.agentId, agentId),
          inArray(instances.id, sim.heartbeatingIds()),
          eq(instances.state, "running"),
          isNull(instances.goneAt),
        ),
      );
    if (deps.config.simulator.failureRatePerHour <= 0) return { heartbeats };
    const roll = sim.rollClaimStatements(now);
    return {
      heartbeats,
      windows: roll.windows,
      claim: roll.claim,
      agents: deps.db.select({ id: agents.id }).from(agents).where(isNull(agents.archivedAt)),
    };
  },
  decide(deps, _agentId, rows, tick) {
    const sim = simulator(deps);
    const windows = rows.windows as unknown as { id: string; since: number | null }[] | undefined;
    if (!sim || !windows) return writesNothing<void>(undefined);
    const rolled = sim.rollWindows(windows, deps.config.simulator.failureRatePerHour, tick.now);
    return {
      statements: rolled.map((failure) => sim.rolledFailureStatement(failure, tick.now)),
      async after(results): Promise<void> {
        const failed = failuresWritten(rolled, results as SimRows[], tick.now);
        for (const { kind, instance } of failed) deps.log.info("simulated failure", { instanceId: instance.id, kind });
        const agentIds = (rows.agents as unknown as { id: string }[]).map((a) => a.id);
        await reportToAgents(
          deps,
          failed.map(({ kind, instance }) => ({ instance, dedupKey: `sim:${instance.id}:${kind}:${tick.now}` })),
          agentIds,
        );
      },
    };
  },
});

type SimRows = Parameters<typeof failuresWritten>[1][number];
