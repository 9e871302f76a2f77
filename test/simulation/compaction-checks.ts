/**
 * Compaction, not just trimming (DESIGN.md, agent run: budget), judged from what a run recorded
 * in `runs.compaction` and the stored history it started from. The budget alone cannot tell: the
 * final trim keeps a prompt within budget that was never compacted.
 * - The first call over budget stubs old tool outputs when its history holds a long one.
 * - No call trims turns while stored history is still in its prompt without first summarising
 *   it (or recording why the summary failed); each summary folds its turns out of the history
 *   the run's later calls start from.
 * - A summary a call reports is persisted for the epoch (later runs start from it).
 */
import type { FitReport, PromptDraft } from "../../agent/prompt/budget.ts";
import { countText } from "../../agent/prompt/tokens.ts";
import type { StartingHistory } from "./sim-step.ts";

export interface CompactionRecord {
  budget: number;
  calls: FitReport[];
}

/** Tokens past which a tool output is certainly longer than the stub that replaces it. */
const LONG_OUTPUT = 40;

export function startingHistory(draft: PromptDraft): StartingHistory {
  const long = (m: PromptDraft["history"][number]["messages"][number]) =>
    m.role === "tool" && typeof m.content === "string" && countText(m.content) > LONG_OUTPUT;
  return { turns: draft.history.length, stubbable: draft.history.some((t) => t.messages.some(long)) };
}

export function checkCompaction(
  runId: number,
  start: StartingHistory,
  compaction: CompactionRecord | null,
  summarizedThrough: number,
): string[] {
  const problems: string[] = [];
  const calls = compaction?.calls ?? [];
  const first = calls[0];
  if (first && first.before > first.budget && start.stubbable && first.stubbedToolOutputs === 0) {
    problems.push(
      `run ${runId}, call 1: ${first.before} tokens over a budget of ${first.budget}, and no tool output of its history was stubbed`,
    );
  }
  let history = start.turns;
  for (const [i, call] of calls.entries()) {
    if (call.trimmedTurns > 0 && history > 0 && call.summarized === null && call.summaryError === undefined) {
      problems.push(
        `run ${runId}, call ${i + 1}: ${call.before} tokens over a budget of ${call.budget} with ${history} stored turns, trimmed ${call.trimmedTurns} turns without summarising (stubbed ${call.stubbedToolOutputs}, dropped ${call.droppedNoopTurns})`,
      );
    }
    if (call.summarized) {
      history -= call.summarized.turns;
      if (call.summarized.through > summarizedThrough) {
        problems.push(
          `run ${runId}, call ${i + 1}: summarised through message ${call.summarized.through}, but the epoch's summary covers only ${summarizedThrough}`,
        );
      }
    }
  }
  return problems;
}
