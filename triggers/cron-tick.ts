/**
 * One agent's part of the cron tick (delivered per agent by the fan-out in triggers/tick.ts).
 * It repairs, it does not decide: it frees dead leases, requests a run for pending work that has
 * none scheduled (a due wake whose delivery went missing, an event whose publish failed),
 * re-publishes a scheduled run whose delivery is overdue, and then runs the fleet checks.
 * A tick with nothing new publishes nothing and costs no LLM tokens.
 */
import { and, eq, lte, min, sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { MINUTE_MS } from "../runtime/time.ts";
import { agents, events, wakes } from "../schema/index.ts";
import { recoverDeadLease } from "./lease.ts";
import { publishRunSlot, requestRun, type Priority } from "./request-run.ts";

/** A scheduled run this late has lost its delivery. */
export const OVERDUE_MS = MINUTE_MS;

/** Extra per-agent work of the tick (fleet reconciliation, heartbeats), added by the host wiring. */
export type TickCheck = (deps: Deps, agentId: string) => Promise<unknown>;

export interface AgentTick {
  agentId: string;
  recoveredLease: boolean;
  requestedRun: boolean;
  republishedRun: boolean;
}

/**
 * One agent's tick: free a dead lease, repair its schedule, then run the fleet checks (each
 * failure logged, never stopping the others). Runs in its own delivery per agent (the fan-out in
 * triggers/tick.ts), so one invocation's cost does not grow with the number of agents.
 */
export async function agentTick(deps: Deps, agentId: string, checks: readonly TickCheck[] = []): Promise<AgentTick> {
  const recoveredLease = await recoverDeadLease(deps, agentId);
  const repair = await repairSchedule(deps, agentId);
  for (const check of checks) {
    try {
      await check(deps, agentId);
    } catch (err) {
      deps.log.error("cron check failed", { agentId, check: check.name, error: String(err) });
    }
  }
  return { agentId, recoveredLease, ...repair };
}

async function repairSchedule(deps: Deps, agentId: string) {
  const { db, clock } = deps;
  const now = clock.now();
  const [agentRows, pendingEvents, dueWakes] = await db.batch([
    db
      .select({ slot: agents.runSlot, nextRunAt: agents.nextRunAt, leaseToken: agents.leaseToken })
      .from(agents)
      .where(eq(agents.id, agentId)),
    db
      .select({ count: sql<number>`count(*)`, priority: min(events.priority) })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.status, "pending"))),
    db
      .select({ count: sql<number>`count(*)` })
      .from(wakes)
      .where(and(eq(wakes.agentId, agentId), eq(wakes.status, "pending"), lte(wakes.dueAt, now))),
  ]);
  const agent = agentRows[0];
  const result = { requestedRun: false, republishedRun: false };
  if (!agent || agent.leaseToken !== null) return result;
  if (agent.nextRunAt !== null) {
    if (agent.nextRunAt <= now - OVERDUE_MS) {
      await publishRunSlot(deps, agentId, agent.slot, now, `:repair:${Math.floor(now / OVERDUE_MS)}`);
      result.republishedRun = true;
    }
    return result;
  }
  const eventCount = Number(pendingEvents[0]?.count ?? 0);
  if (eventCount > 0 || Number(dueWakes[0]?.count ?? 0) > 0) {
    const priority = (eventCount > 0 ? Math.min(Number(pendingEvents[0]?.priority ?? 1), 1) : 1) as Priority;
    result.requestedRun = (await requestRun(deps, agentId, priority)).scheduled;
  }
  return result;
}
