/**
 * claimRun: one atomic database batch that (1) recovers a dead lease, (2) takes the lease if it
 * is free, the delivery's slot is current and the run is due, (3) bumps the per-agent run
 * counter for the run id, (4) marks every pending event and every due pending wake as consumed
 * by that run id — except what was handed back MAX_EVENT_ATTEMPTS times, which it drops as
 * poison. Because the claim and the consumption commit together, a due wake or event is
 * consumed by exactly one run; if that run dies, recovery hands them to the next claim.
 *
 * Later statements of the batch act only when the claim's random token is on the agent row, so
 * a claim that did not win changes nothing beyond the recovery.
 */
import { and, eq, gte, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { batchByName } from "../db/named-batch.ts";
import { insertWhere } from "../db/insert-where.ts";
import { agents, events, runs, wakes } from "../schema/index.ts";
import { recoverDeadLeaseStatements } from "./lease.ts";
import { heldRunId, holdsLease, leaseHeld } from "./lease-held.ts";
import type { ConsumedEvent, ConsumedWake } from "./run-step.ts";

export type Claim =
  | {
      kind: "claimed";
      agentId: string;
      runId: number;
      token: string;
      sessionEpoch: number;
      claimedAt: number;
      events: ConsumedEvent[];
      wakes: ConsumedWake[];
    }
  /** The slot was superseded or already claimed: acknowledge and do nothing. */
  | { kind: "stale" }
  /** Another run holds the lease: try again when it expires (its finish schedules the follow-up). */
  | { kind: "busy"; retryAt: number; holder: number }
  /** Delivered early: try again when due. */
  | { kind: "early"; retryAt: number };

export async function claimRun(
  deps: Pick<PipelineDeps, "db" | "clock" | "config" | "hostId">,
  agentId: string,
  slot: number,
): Promise<Claim> {
  const { db, clock, config } = deps;
  const now = clock.now();
  const token = crypto.randomUUID();
  // After the take: whether this claim won (its token is on the row), and the run id it took.
  const holder = { agentId, token };
  const holdsToken = holdsLease(holder, "any expiry");
  const claimedRunId = heldRunId(holder);

  const results = await batchByName(db, {
    ...recoverDeadLeaseStatements(deps, agentId, now),
    takeLease: db
      .update(agents)
      .set({
        runCounter: sql`${agents.runCounter} + 1`,
        leaseRunId: sql`${agents.runCounter} + 1`,
        leaseToken: token,
        leaseExpiresAt: now + config.runLeaseMs,
        leaseHost: deps.hostId ?? null,
        nextRunAt: null,
      })
      .where(
        and(
          eq(agents.id, agentId),
          eq(agents.runSlot, slot),
          isNotNull(agents.nextRunAt),
          lte(agents.nextRunAt, now),
          isNull(agents.leaseToken),
        ),
      )
      .returning({ runId: agents.leaseRunId, sessionEpoch: agents.sessionEpoch }),
    startRun: insertWhere(
      db,
      runs,
      {
        agentId: sql`${agents.id}`,
        runId: sql`${agents.leaseRunId}`,
        status: "running",
        sessionEpoch: sql`${agents.sessionEpoch}`,
        startedAt: now,
      },
      leaseHeld(holder, "any expiry"),
      sql`${agents}`,
    ),
    // Bounded retries (invariant 9): what failed or crashed runs handed back MAX_EVENT_ATTEMPTS
    // times is dropped as poison instead of being claimed again (notify/poison-alerts.ts tells a human).
    dropPoisonEvents: db
      .update(events)
      .set({ status: "dropped", dropReason: "poison", consumedAt: now })
      .where(and(eq(events.agentId, agentId), eq(events.status, "pending"), gte(events.attempts, config.maxEventAttempts), holdsToken))
      .returning({ id: events.id }),
    dropPoisonWakes: db
      .update(wakes)
      .set({ status: "dropped", dropReason: "poison", consumedAt: now })
      .where(and(eq(wakes.agentId, agentId), eq(wakes.status, "pending"), gte(wakes.attempts, config.maxEventAttempts), holdsToken))
      .returning({ id: wakes.id }),
    consumeEvents: db
      .update(events)
      .set({ status: "consumed", runId: claimedRunId, consumedAt: now })
      .where(and(eq(events.agentId, agentId), eq(events.status, "pending"), holdsToken))
      .returning({
        id: events.id,
        source: events.source,
        priority: events.priority,
        payload: events.payload,
        createdAt: events.createdAt,
      }),
    consumeWakes: db
      .update(wakes)
      .set({ status: "consumed", consumedByRun: claimedRunId, consumedAt: now })
      .where(and(eq(wakes.agentId, agentId), eq(wakes.status, "pending"), lte(wakes.dueAt, now), holdsToken))
      .returning({ id: wakes.id, dueAt: wakes.dueAt, reason: wakes.reason, createdByRun: wakes.createdByRun }),
    // Copied now, so the run's record keeps what it claimed even after a hand-back re-claims it.
    recordTriggers: db
      .update(runs)
      .set({
        triggers: sql`(select json_group_array(json_object('source', ${events.source}, 'id', ${events.id})) from ${events}
          where ${events.agentId} = ${agentId} and ${events.runId} = ${runs.runId} and ${events.status} = 'consumed')`,
        wakesConsumed: sql`(select json_group_array(${wakes.id}) from ${wakes}
          where ${wakes.agentId} = ${agentId} and ${wakes.consumedByRun} = ${runs.runId} and ${wakes.status} = 'consumed')`,
      })
      .where(and(eq(runs.agentId, agentId), eq(runs.runId, claimedRunId))),
  });

  const won = results.takeLease[0];
  if (won?.runId != null) {
    return {
      kind: "claimed",
      agentId,
      runId: won.runId,
      token,
      sessionEpoch: won.sessionEpoch,
      claimedAt: now,
      events: results.consumeEvents.sort((a, b) => a.id - b.id),
      wakes: results.consumeWakes.sort((a, b) => a.id - b.id),
    };
  }
  return explainLostClaim(deps, agentId, slot, now);
}

async function explainLostClaim(deps: Pick<PipelineDeps, "db">, agentId: string, slot: number, now: number): Promise<Claim> {
  const [agent] = await deps.db
    .select({ runSlot: agents.runSlot, nextRunAt: agents.nextRunAt, leaseRunId: agents.leaseRunId, leaseExpiresAt: agents.leaseExpiresAt })
    .from(agents)
    .where(eq(agents.id, agentId));
  if (!agent || agent.runSlot !== slot || agent.nextRunAt === null) return { kind: "stale" };
  if (agent.leaseRunId !== null) return { kind: "busy", retryAt: Math.max(agent.leaseExpiresAt ?? now, now), holder: agent.leaseRunId };
  return { kind: "early", retryAt: Math.max(agent.nextRunAt, now) };
}
