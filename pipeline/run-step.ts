/**
 * The contract between the pipeline and whatever a claimed run does (the agent, or the minimal
 * step used when none is wired). The pipeline owns claiming, recording and releasing; the step
 * only decides and acts, and reports what it did. The verdict (noop) is computed by code.
 */
import type { PipelineDeps } from "./deps.ts";
import type { RunFence } from "./run-fence.ts";

export interface ConsumedEvent {
  id: number;
  source: string;
  priority: number;
  payload: unknown;
  createdAt: number;
}

export interface ConsumedWake {
  id: number;
  dueAt: number;
  reason: string;
  createdByRun: number | null;
}

export interface RunContext<D extends PipelineDeps = PipelineDeps> {
  /** The ports of the layer that runs the step (the agent's, as scoped to this agent in jobs/). */
  deps: D;
  agentId: string;
  runId: number;
  sessionEpoch: number;
  events: ConsumedEvent[];
  wakes: ConsumedWake[];
  /** ms epoch by which the step must have finished, safely inside the lease. */
  deadline: number;
  /** The run's lease token: every side effect of the run is fenced by it (pipeline/run-fence.ts). */
  fence: RunFence;
}

/** One message of the run for the conversation, with its token count measured when written. */
export interface ConversationTurn {
  role: "user" | "assistant" | "tool";
  content: string;
  toolCalls: unknown;
  toolCallId: string | null;
  tokens: number;
}

export interface RunOutcome {
  /** none = the minimal step; llm or rules when the agent decided. */
  decider: "none" | "llm" | "rules";
  /** Whether a mutating tool ran; together with the events this decides the no-op verdict. */
  mutated: boolean;
  reply: string | null;
  promptTokens: number;
  completionTokens: number;
  contextTokens: number;
  compaction: unknown;
  /** The model's output limit cut one of the run's messages (recorded as `runs.truncated`). */
  truncated?: boolean;
  /** A reply or tool argument was over LLM_OUTPUT_MAX_CHARS and was cut (recorded as `runs.outputCut`). */
  outputCut?: boolean;
  /** Set when the step ran but something it tried failed (recorded, not fatal). */
  error?: string;
  /**
   * The run's turns for the conversation. finishRun stores them in the same batch that records
   * the run succeeded, only if the run is not a no-op and still holds its lease.
   */
  turns?: ConversationTurn[];
}

export type RunStep<D extends PipelineDeps = PipelineDeps> = (context: RunContext<D>) => Promise<RunOutcome>;

/**
 * Who wrote a run's user turn: the operators of the human messages it consumed (payload.operator),
 * each once, in order, comma-separated; null when it consumed none that names one.
 */
export function humanWriters(events: readonly ConsumedEvent[]): string | null {
  const names = events.filter((e) => e.source === "human").map((e) => (e.payload as { operator?: unknown } | null)?.operator);
  const unique = [...new Set(names.filter((n): n is string => typeof n === "string" && n.length > 0))];
  return unique.length ? unique.join(", ") : null;
}

/** The verdict, by code: a run is no-op when it consumed no human message and mutated nothing. */
export function isNoop(events: readonly ConsumedEvent[], outcome: Pick<RunOutcome, "mutated">): boolean {
  return !outcome.mutated && !events.some((e) => e.source === "human");
}
