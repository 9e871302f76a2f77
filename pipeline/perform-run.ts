/**
 * A run delivery, end to end: claim the slot, run the step, finish. A delivery that cannot claim
 * is re-published for when it can (lease freed, or run due) or acknowledged when stale. The step
 * gets a deadline inside the lease; if it throws, the run is recorded `failed` and its work is
 * handed back. If this process dies mid-run, the lease expires and recovery re-claims the work.
 * A claimed run is the root span of its trace (runtime/trace.ts); the trace is handed to the
 * exporter once the run is recorded, and the run never waits for it (`background`, the Worker's
 * `waitUntil`, keeps it alive there).
 */
import type { PipelineDeps } from "./deps.ts";
import type { RunStep } from "./run-step.ts";
import { claimRun, type Claim } from "./claim-run.ts";
import { finishRun, type FinishResult, type RunResult } from "./finish-run.ts";
import { publishRunSlot } from "./request-run.ts";
import type { RunFence } from "./run-fence.ts";
import type { ConsumedEvent, ConsumedWake } from "./run-step.ts";
import { noopTracer } from "../runtime/trace.ts";

/** Time kept between the step's deadline and the lease's expiry, for recording the outcome. */
const FINISH_MARGIN_MS = 30_000;

export type RunDeliveryResult = Exclude<Claim["kind"], "claimed"> | FinishResult;

export async function performRun<D extends PipelineDeps>(
  deps: D & { runStep: RunStep<D> },
  agentId: string,
  slot: number,
): Promise<RunDeliveryResult> {
  const claim = await claimRun(deps, agentId, slot);
  switch (claim.kind) {
    case "stale":
      return "stale";
    case "busy":
      await publishRunSlot(deps, agentId, slot, claim.retryAt, `:after:${claim.holder}`);
      return "busy";
    case "early":
      await publishRunSlot(deps, agentId, slot, claim.retryAt, `:at:${claim.retryAt}`);
      return "early";
  }
  // Its events and wakes were already consumed by an earlier run (a wake that fell due inside
  // another run, a recovered lease with nothing to re-claim): nothing to decide, no LLM tokens.
  if (claim.events.length === 0 && claim.wakes.length === 0) return finishRun(deps, claim, { skipped: true });
  const lease = deps.config.runLeaseMs;
  const deadline = claim.claimedAt + Math.max(lease - FINISH_MARGIN_MS, lease / 2);
  const fence = { agentId, runId: claim.runId, token: claim.token, leaseExpiresAt: claim.claimedAt + lease, deadline };
  // The run's trace (runtime/trace.ts): its LLM calls and provider actions are children of this span.
  const tracer = deps.tracer ?? noopTracer;
  const span = tracer.startRun(fence, "fleetwarden.run", {
    "fleetwarden.agent.id": agentId,
    "fleetwarden.run.id": claim.runId,
    "fleetwarden.run.triggers": triggerKinds(claim.events, claim.wakes),
    "fleetwarden.run.events": claim.events.length,
    "fleetwarden.run.wakes": claim.wakes.length,
  });
  try {
    const result = await stepResult(deps, claim, fence, deadline);
    const finished = await finishRun(deps, claim, result);
    span.setAttributes({
      "fleetwarden.run.status": finished,
      "fleetwarden.run.decider": "outcome" in result ? result.outcome.decider : null,
      "fleetwarden.run.input_tokens": "outcome" in result ? result.outcome.promptTokens : null,
      "fleetwarden.run.output_tokens": "outcome" in result ? result.outcome.completionTokens : null,
    });
    span.end("error" in result ? result.error : finished === "lost" ? "the run lost its lease before it finished" : null);
    return finished;
  } catch (err) {
    span.end(err instanceof Error ? err.message : String(err));
    throw err;
  } finally {
    // Sent after the run, never awaited by it: one request per run, bounded by the exporter's timeout.
    const sent = tracer.finishRun(fence);
    deps.background?.(sent);
  }
}

/** What set the run going: its events' sources and `wake`, each once, sorted. */
function triggerKinds(events: readonly ConsumedEvent[], wakes: readonly ConsumedWake[]): string[] {
  const kinds = new Set(events.map((e) => e.source));
  if (wakes.length > 0) kinds.add("wake");
  return [...kinds].sort();
}

/** Runs the step; a step that throws is the run's error (the pipeline records it failed). */
async function stepResult<D extends PipelineDeps>(
  deps: D & { runStep: RunStep<D> },
  claim: Extract<Claim, { kind: "claimed" }>,
  fence: RunFence,
  deadline: number,
): Promise<RunResult> {
  const { agentId } = fence;
  try {
    const outcome = await deps.runStep({
      deps,
      agentId,
      runId: claim.runId,
      sessionEpoch: claim.sessionEpoch,
      events: claim.events,
      wakes: claim.wakes,
      deadline,
      fence,
    });
    return { outcome };
  } catch (err) {
    deps.log.error("run step failed", { agentId, runId: claim.runId, error: String(err) });
    return { error: err instanceof Error ? err.message : String(err) };
  }
}
