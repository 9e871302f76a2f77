/**
 * The run fence (invariant 8): a run's side effects commit only while that run still holds its
 * lease. Every mutating write a run makes — provider action record, approval request, wake create
 * or cancel, notification, memory write — goes through `fencedWrite`, which gives it the fence's
 * condition for its WHERE clause (pipeline/lease-held.ts with an unexpired lease: the
 * compare-and-set finishRun uses, plus expiry). A write the fence refuses changes nothing, and
 * fencedWrite throws FenceLostError, which ends the run's step: a run declared dead (or past its
 * lease) stops acting.
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
function fenceHolds(fence: RunFence | null | undefined, now: number): SQL {
  if (!fence) return sql`1 = 1`;
  return holdsLease(fence, { unexpiredAt: now });
}

const returnedRows = (result: unknown) => Array.isArray(result) && result.length > 0;

/**
 * The one way a run's side effect reaches the database. `write` builds its statement (or batch)
 * with `holds` in the WHERE of what it writes, runs it, and answers its result; `holds` is the
 * fence's condition as of now, always true without a fence. When the write did nothing (`wrote`
 * false; by default: it returned no row) and the fence no longer holds, the fence is why:
 * FenceLostError naming `what`. Otherwise the result is returned and the caller gives its own
 * reason (a cap, a missing row), so that reason is told only while the run still holds its lease.
 * A reason that must win over a lost fence (an idempotency key already recorded: its record
 * answers a repeat) is read inside `write`, and makes `wrote` true.
 */
export async function fencedWrite<R>(
  deps: Pick<PipelineDeps, "db" | "clock">,
  fence: RunFence | null | undefined,
  what: string,
  write: (holds: SQL) => PromiseLike<R>,
  wrote: (result: R) => boolean = returnedRows,
): Promise<R> {
  const result = await write(fenceHolds(fence, deps.clock.now()));
  if (fence && !wrote(result)) {
    const [row] = await deps.db.all<{ held: number }>(sql`select ${fenceHolds(fence, deps.clock.now())} as held`);
    if (!row?.held) throw new FenceLostError(fence.runId, what);
  }
  return result;
}

/**
 * Renews the lease (lease_expires_at = now + RUN_LEASE_MS) while the run still holds it; throws
 * FenceLostError when it does not. The run's deadline does not move: renewal keeps a live run's
 * lease ahead of its work, it never makes a run longer.
 */
export async function renewLease(deps: Pick<PipelineDeps, "db" | "clock" | "config">, fence: RunFence): Promise<void> {
  const renewal = leaseRenewal(deps, fence);
  renewal.settle(await renewal.statement);
}

/**
 * The renewal as a statement to send in a batch of the caller's (the run's LLM transcript write:
 * issue 26's one renewal per iteration at no round trip of its own), and `settle`, which takes
 * the statement's rows: it moves the fence's expiry on, or throws FenceLostError when the run no
 * longer holds its lease.
 */
export function leaseRenewal(deps: Pick<PipelineDeps, "db" | "clock" | "config">, fence: RunFence) {
  const now = deps.clock.now();
  const expiresAt = now + deps.config.runLeaseMs;
  const statement = deps.db
    .update(agents)
    .set({ leaseExpiresAt: sql`max(${agents.leaseExpiresAt}, ${expiresAt})` })
    .where(leaseHeld(fence, { unexpiredAt: now }))
    .returning({ id: agents.id });
  return {
    statement,
    settle(rows: readonly unknown[]): void {
      if (rows.length === 0) throw new FenceLostError(fence.runId, `renewing its lease at ${iso(now)}`);
      fence.leaseExpiresAt = Math.max(fence.leaseExpiresAt, expiresAt);
    },
  };
}

/** What is left of the lease for an outside call (a provider action): never negative. */
export function leaseRemainingMs(fence: RunFence | null | undefined, now: number): number | null {
  return !fence ? null : Math.max(0, fence.leaseExpiresAt - now);
}
