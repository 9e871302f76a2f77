/**
 * One agent's part of the cron tick (delivered per agent by the fan-out in jobs/tick.ts).
 * It repairs, it does not decide: it frees dead leases, requests a run for pending work that has
 * none scheduled (a due wake whose delivery went missing, an event whose publish failed),
 * re-publishes a scheduled run whose delivery is overdue, and then runs the fleet checks.
 * All of it shares the tick's one snapshot batch and one write batch (pipeline/tick-plan.ts).
 * A tick with nothing new publishes nothing and costs no LLM tokens.
 */
import { and, eq, lte, min, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { MINUTE_MS } from "../runtime/time.ts";
import { agents, events, wakes } from "../schema/index.ts";
import { publishRecoveredRun, recoverDeadLeaseStatements } from "./lease.ts";
import { debounceWindow, publishRunSlot, scheduleRunStatement, type Priority } from "./request-run.ts";
import { defineTickCheck, runTickChecks, type AnyTickCheck } from "./tick-plan.ts";

/** A scheduled run this late has lost its delivery. */
export const OVERDUE_MS = MINUTE_MS;

export interface AgentTick {
  agentId: string;
  recoveredLease: boolean;
  requestedRun: boolean;
  republishedRun: boolean;
}

/** What the schedule repair decides from the agent row and its pending work. */
export type ScheduleRepair =
  | { kind: "none" }
  | { kind: "republish"; slot: number }
  | { kind: "request"; priority: Priority /** Only due wakes wait: run now, no debounce (they are late already). */; dueNow?: true };

/**
 * The repair the schedule needs (pure): nothing while a run holds the lease; a scheduled run
 * overdue by OVERDUE_MS is published again; pending events or due wakes with no run scheduled
 * get one requested (priority 0 if a human's event waits).
 */
export function scheduleRepair(
  agent: { slot: number; nextRunAt: number | null; leaseToken: string | null } | undefined,
  pending: { events: number; minPriority: number | null; dueWakes: number },
  now: number,
): ScheduleRepair {
  if (!agent || agent.leaseToken !== null) return { kind: "none" };
  if (agent.nextRunAt !== null) return agent.nextRunAt <= now - OVERDUE_MS ? { kind: "republish", slot: agent.slot } : { kind: "none" };
  if (pending.events > 0) return { kind: "request", priority: Math.min(pending.minPriority ?? 1, 1) as Priority };
  return pending.dueWakes > 0 ? { kind: "request", priority: 1, dueNow: true } : { kind: "none" };
}

/** The pipeline's own repairs, as the tick's first check: its lease recovery runs first in the snapshot. */
export const repairPipeline = defineTickCheck({
  name: "repairPipeline",
  reads(deps: PipelineDeps, agentId: string, now: number) {
    const { db } = deps;
    return {
      ...recoverDeadLeaseStatements(deps, agentId, now),
      agent: db
        .select({ slot: agents.runSlot, nextRunAt: agents.nextRunAt, leaseToken: agents.leaseToken })
        .from(agents)
        .where(eq(agents.id, agentId)),
      pendingEvents: db
        .select({ count: sql<number>`count(*)`, priority: min(events.priority) })
        .from(events)
        .where(and(eq(events.agentId, agentId), eq(events.status, "pending"))),
      dueWakes: db
        .select({ count: sql<number>`count(*)` })
        .from(wakes)
        .where(and(eq(wakes.agentId, agentId), eq(wakes.status, "pending"), lte(wakes.dueAt, now))),
    };
  },
  decide(deps, agentId, rows, tick) {
    const { now } = tick;
    const repair = scheduleRepair(
      rows.agent[0],
      {
        events: Number(rows.pendingEvents[0]?.count ?? 0),
        minPriority: rows.pendingEvents[0]?.priority ?? null,
        dueWakes: Number(rows.dueWakes[0]?.count ?? 0),
      },
      now,
    );
    const target = repair.kind === "request" ? now + (repair.dueNow ? 0 : debounceWindow(deps.config, repair.priority)) : 0;
    return {
      statements: repair.kind === "request" ? [scheduleRunStatement(deps, agentId, target)] : [],
      async after(results): Promise<AgentTick> {
        const recoveredLease = await publishRecoveredRun(deps, agentId, rows.freeLease[0], now);
        const report: AgentTick = { agentId, recoveredLease, requestedRun: false, republishedRun: false };
        if (repair.kind === "republish") {
          await publishRunSlot(deps, agentId, repair.slot, now, `:repair:${Math.floor(now / OVERDUE_MS)}`);
          report.republishedRun = true;
        } else if (repair.kind === "request") {
          const [moved] = results[0] as { slot: number; runAt: number | null }[];
          if (moved) {
            await publishRunSlot(deps, agentId, moved.slot, moved.runAt ?? target);
            report.requestedRun = true;
          }
        }
        return report;
      },
    };
  },
});

/**
 * One agent's tick: the pipeline's repairs, then the fleet checks (each failure logged, never
 * stopping the others), all from one snapshot batch and into one write batch. Runs in its own
 * delivery per agent (the fan-out in jobs/tick.ts), so one invocation's cost does not grow
 * with the number of agents.
 */
export async function agentTick<D extends PipelineDeps>(
  deps: D,
  agentId: string,
  checks: readonly AnyTickCheck<D>[] = [],
): Promise<AgentTick> {
  const outcomes = await runTickChecks(deps, agentId, [repairPipeline, ...checks]);
  let report: AgentTick = { agentId, recoveredLease: false, requestedRun: false, republishedRun: false };
  for (const outcome of outcomes) {
    if ("error" in outcome) {
      if (outcome.name === repairPipeline.name) throw outcome.error;
      deps.log.error("cron check failed", { agentId, check: outcome.name, error: String(outcome.error) });
    } else if (outcome.name === repairPipeline.name) {
      report = outcome.report as AgentTick;
    }
  }
  return report;
}
