/**
 * finishRun: records the run's outcome (and, for a run that is not a no-op, its conversation
 * turns) and releases the lease in one batch, and schedules the one follow-up run if anything
 * requested a run while this one held the lease. A run that failed hands its events and wakes
 * back (pending) and schedules a retry. All of it happens only
 * while the run still holds its lease: a run declared dead meanwhile changes nothing, because
 * recovery already gave its work to another run.
 *
 * Runs never trigger runs: a finished run publishes a delivery only when an outside request
 * arrived during it (the agent's `nextRunAt` is set) or when it failed and its work must retry.
 */
import { and, eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import { batchByName, type NamedStatements } from "../db/named-batch.ts";
import { insertWhere } from "../db/insert-where.ts";
import { agents, messages, runs } from "../schema/index.ts";
import { handBackStatements } from "./hand-back.ts";
import { holdsLease, leaseHeld } from "./lease-held.ts";
import { publishRunSlot } from "./request-run.ts";
import { humanWriters, isNoop, type RunOutcome } from "./run-step.ts";
import type { Claim } from "./claim-run.ts";

type Claimed = Extract<Claim, { kind: "claimed" }>;

export type FinishResult = "succeeded" | "failed" | "skipped" | "lost";

/** What the run came to: the step's outcome, its error, or skipped (it had nothing to consume). */
export type RunResult = { outcome: RunOutcome } | { error: string } | { skipped: true };

/** The run row's final fields; the no-op verdict is computed here, by code. */
function runRecord(claim: Claimed, result: RunResult, now: number) {
  if ("error" in result) return { status: "failed", error: result.error, finishedAt: now };
  if ("skipped" in result) return { status: "skipped", noop: true, finishedAt: now };
  const { outcome } = result;
  return {
    status: "succeeded",
    noop: isNoop(claim.events, outcome),
    decider: outcome.decider,
    reply: outcome.reply,
    promptTokens: outcome.promptTokens,
    completionTokens: outcome.completionTokens,
    contextTokens: outcome.contextTokens,
    compaction: outcome.compaction ?? null,
    truncated: outcome.truncated ?? false,
    outputCut: outcome.outputCut ?? false,
    error: outcome.error ?? null,
    finishedAt: now,
  };
}

export async function finishRun(deps: PipelineDeps, claim: Claimed, result: RunResult): Promise<FinishResult> {
  const { db, clock } = deps;
  const now = clock.now();
  const { agentId, runId } = claim;
  // A finish applies whether or not the lease expired, as long as nobody took it off the row.
  const holds = holdsLease(claim, "any expiry");
  const failed = "error" in result;
  const retryAt = now + deps.config.debounceStateMs;

  const runUpdate = runRecord(claim, result, now);
  // The conversation gains the run's turns only with its success, and only if it was no no-op.
  const turns = "outcome" in result && !runUpdate.noop ? (result.outcome.turns ?? []) : [];
  const writers = humanWriters(claim.events);
  const storeTurns = turns.map(
    (t, i) =>
      [
        `storeTurn${i}`,
        insertWhere(
          db,
          messages,
          {
            agentId,
            sessionEpoch: claim.sessionEpoch,
            runId,
            role: t.role,
            content: t.content,
            toolCalls: t.toolCalls ?? null,
            toolCallId: t.toolCallId,
            operator: t.role === "user" ? writers : null,
            tokens: t.tokens,
            createdAt: now,
          },
          holds,
        ),
      ] as const,
  );

  const giveBack: NamedStatements = failed ? handBackStatements(db, agentId, runId, holds) : {};

  // A run declared dead meanwhile changes nothing, but why it stopped (e.g. a write its fence
  // refused) is still worth keeping on its crashed record.
  const noteOnCrashed: NamedStatements =
    "error" in result
      ? {
          noteOnCrashed: db
            .update(runs)
            .set({ error: sql`coalesce(${runs.error} || '; then: ', '') || ${result.error.slice(0, 1000)}` })
            .where(and(eq(runs.agentId, agentId), eq(runs.runId, runId), eq(runs.status, "crashed"), sql`not ${holds}`)),
        }
      : {};

  const nextRunAt = failed
    ? sql`min(coalesce(${agents.nextRunAt}, ${retryAt}), ${retryAt})`
    : sql`case when ${agents.nextRunAt} is null then null else max(${agents.nextRunAt}, ${now}) end`;

  const results = await batchByName(db, {
    recordRun: db
      .update(runs)
      .set(runUpdate)
      .where(and(eq(runs.agentId, agentId), eq(runs.runId, runId), eq(runs.status, "running"), holds))
      .returning({ runId: runs.runId }),
    ...Object.fromEntries(storeTurns),
    ...giveBack,
    ...noteOnCrashed,
    releaseLease: db
      .update(agents)
      .set({
        leaseRunId: null,
        leaseToken: null,
        leaseExpiresAt: null,
        ...("outcome" in result && result.outcome.contextTokens > 0 ? { contextTokens: result.outcome.contextTokens } : {}),
        runSlot: sql`case when ${nextRunAt} is null then ${agents.runSlot} else ${agents.runSlot} + 1 end`,
        nextRunAt,
      })
      .where(leaseHeld(claim, "any expiry"))
      .returning({ slot: agents.runSlot, runAt: agents.nextRunAt }),
  });

  const followUp = results.releaseLease[0];
  if (!followUp) return "lost";
  deps.log.info("run finished", {
    agentId,
    runId,
    status: runUpdate.status,
    noop: "noop" in runUpdate ? runUpdate.noop : null,
    decider: "decider" in runUpdate ? runUpdate.decider : null,
  });
  if (followUp.runAt !== null) await publishRunSlot(deps, agentId, followUp.slot, followUp.runAt);
  return failed ? "failed" : "skipped" in result ? "skipped" : "succeeded";
}
