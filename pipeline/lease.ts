/**
 * Recovery of dead leases. A run that outlives RUN_LEASE_MS is dead: its run row becomes
 * `crashed`, the events and wakes it had consumed go back to pending, the lease is freed and a
 * run is requested at once so they are re-claimed. These statements run inside the claim batch
 * (so a delivery finding a dead lease recovers and claims in one step) and in the cron tick.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { batchByName } from "../db/named-batch.ts";
import { agents, runs } from "../schema/index.ts";
import { handBackStatements } from "./hand-back.ts";

/** The dead lease's run id, when the lease has expired. */
const deadRunId = (agentId: string, now: number) =>
  sql`(select ${agents.leaseRunId} from ${agents} where ${agents.id} = ${agentId} and ${agents.leaseExpiresAt} <= ${now})`;

/** Statements that recover a dead lease; `freeLease` returns the agent's slot when it recovered one. */
export function recoverDeadLeaseStatements(deps: Pick<PipelineDeps, "db">, agentId: string, now: number) {
  const { db } = deps;
  return {
    markCrashed: db
      .update(runs)
      .set({ status: "crashed", finishedAt: now, error: "lease expired before the run finished" })
      .where(and(eq(runs.agentId, agentId), eq(runs.status, "running"), eq(runs.runId, deadRunId(agentId, now)))),
    ...handBackStatements(db, agentId, deadRunId(agentId, now)),
    freeLease: db
      .update(agents)
      .set({
        leaseRunId: null,
        leaseToken: null,
        leaseExpiresAt: null,
        nextRunAt: sql`coalesce(${agents.nextRunAt}, ${now})`,
      })
      .where(and(eq(agents.id, agentId), lte(agents.leaseExpiresAt, now)))
      .returning({ slot: agents.runSlot, runAt: agents.nextRunAt }),
  };
}

/** Cron's recovery: frees a dead lease and publishes the run that re-claims its work. */
export async function recoverDeadLease(deps: Pick<PipelineDeps, "db" | "clock" | "scheduler" | "log">, agentId: string): Promise<boolean> {
  const now = deps.clock.now();
  const results = await batchByName(deps.db, recoverDeadLeaseStatements(deps, agentId, now));
  return publishRecoveredRun(deps, agentId, results.freeLease[0], now);
}

/** After a freed lease (`freeLease`'s row) committed: publishes the run that re-claims its work. */
export async function publishRecoveredRun(
  deps: Pick<PipelineDeps, "scheduler" | "log">,
  agentId: string,
  recovered: { slot: number; runAt: number | null } | undefined,
  now: number,
): Promise<boolean> {
  if (!recovered) return false;
  await deps.scheduler.publish({
    dedupKey: `run:${agentId}:${recovered.slot}:recovered:${now}`,
    notBefore: recovered.runAt ?? now,
    body: { type: "run", agentId, slot: recovered.slot },
  });
  deps.log.info("recovered a dead run lease", { agentId });
  return true;
}
