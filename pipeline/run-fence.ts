/**
 * The run fence (invariant 8): a run's side effects commit only while that run still holds its
 * lease. Every mutating write a run makes — provider action record, approval request, wake create
 * or cancel, notification, memory write — carries `fenceHolds(fence, now)` in its WHERE clause:
 * the same compare-and-set on the agent row's lease token that finishRun uses, plus an unexpired
 * lease. A write the fence refuses changes nothing, and the writer throws FenceLostError, which
 * ends the run's step: a run declared dead (or past its lease) stops acting.
 *
 * Writes not made by a run (a human's approval, the cron tick) pass no fence (`null`): none applies.
 */
import { sql, type SQL } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { iso } from "../runtime/time.ts";
import { agents } from "../schema/index.ts";
import { holdsLease, leaseHeld } from "./lease-held.ts";

export interface RunFence {
  agentId: string;
  runId: number;
  /** The random token the claim put on the agent row. */
  token: string;
  /** When the lease expires, as of the claim or the last renewal (ms epoch). */
  leaseExpiresAt: number;
  /** By when the run must stop acting: inside the lease, with time to record its outcome. */
  deadline: number;
}

export class FenceLostError extends Error {
  constructor(
    readonly runId: number,
    what: string,
  ) {
    super(`run ${runId} no longer holds a live lease: ${what} was refused`);
    this.name = "FenceLostError";
  }
}

/** SQL: the agent row still holds this run's token with an unexpired lease (true for `null`). */
export function fenceHolds(fence: RunFence | null | undefined, now: number): SQL {
  if (!fence) return sql`1 = 1`;
  return holdsLease(fence, { unexpiredAt: now });
}

/**
 * For a fenced write that changed nothing: throws FenceLostError when the fence is why, so the
 * caller reports its own reason (a cap, a missing row) only while the run still holds its lease.
 */
export async function refusedUnlessFenced(deps: Pick<PipelineDeps, "db" | "clock">, fence: RunFence | null | undefined, what: string): Promise<void> {
  if (!fence) return;
  const [row] = await deps.db.all<{ held: number }>(sql`select ${fenceHolds(fence, deps.clock.now())} as held`);
  if (!row?.held) throw new FenceLostError(fence.runId, what);
}

/**
 * Renews the lease (lease_expires_at = now + RUN_LEASE_MS) while the run still holds it; throws
 * FenceLostError when it does not. The run's deadline does not move: renewal keeps a live run's
 * lease ahead of its work, it never makes a run longer.
 */
export async function renewLease(deps: Pick<PipelineDeps, "db" | "clock" | "config">, fence: RunFence): Promise<void> {
  const now = deps.clock.now();
  const expiresAt = now + deps.config.runLeaseMs;
  const rows = await deps.db
    .update(agents)
    .set({ leaseExpiresAt: sql`max(${agents.leaseExpiresAt}, ${expiresAt})` })
    .where(leaseHeld(fence, { unexpiredAt: now }))
    .returning({ id: agents.id });
  if (rows.length === 0) throw new FenceLostError(fence.runId, `renewing its lease at ${iso(now)}`);
  fence.leaseExpiresAt = Math.max(fence.leaseExpiresAt, expiresAt);
}

/** What is left of the lease for an outside call (a provider action): never negative. */
export function leaseRemainingMs(fence: RunFence | null | undefined, now: number): number | null {
  return !fence ? null : Math.max(0, fence.leaseExpiresAt - now);
}
