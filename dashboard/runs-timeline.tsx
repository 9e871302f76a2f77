/**
 * The run timeline, newest first: what woke each run, who decided, whether it acted, its tokens,
 * duration and status. Used by the Runs page (full) and the overview (latest few), and
 * re-rendered by the live updates.
 */
import type { listRuns } from "../triggers/agent-state.ts";
import { NoopBadge, RunStatus } from "./badges.tsx";
import { duration, relative, tokens, utcTime } from "./format.ts";
import { OptionalFact } from "./facts.tsx";

export type RunView = Awaited<ReturnType<typeof listRuns>>[number];

const DECIDERS: Record<string, string> = { llm: "LLM", rules: "rules policy", none: "no agent (minimal step)" };

/** "human ×2, wake ×1": what the run consumed, by source. */
export function triggerSummary(run: Pick<RunView, "triggers" | "wakesConsumed">): string {
  const counts = new Map<string, number>();
  for (const t of run.triggers) counts.set(t.source, (counts.get(t.source) ?? 0) + 1);
  if (run.wakesConsumed.length) counts.set("wake", (counts.get("wake") ?? 0) + run.wakesConsumed.length);
  if (counts.size === 0) return "nothing (recovery or retry)";
  return [...counts].map(([source, n]) => `${source} ×${n}`).join(", ");
}

export const deciderLabel = (decider: string | null) => (decider ? (DECIDERS[decider] ?? decider) : "not decided yet");

/** A run's facts, the same on its card and its page: why, who decided, tokens, when, how long. */
export function RunFacts({ run, now, showEpoch = false }: { run: RunView; now: number; showEpoch?: boolean }) {
  return (
    <dl class="facts">
      <dt>Triggers</dt>
      <dd>{triggerSummary(run)}</dd>
      <dt>Decider</dt>
      <dd>{deciderLabel(run.decider)}</dd>
      <OptionalFact term="Session epoch" value={showEpoch ? String(run.sessionEpoch) : null} />
      <dt>Tokens</dt>
      <dd>{`${tokens(run.promptTokens)} prompt, ${tokens(run.completionTokens)} completion; largest prompt ${tokens(run.contextTokens)}`}</dd>
      <dt>Started</dt>
      <dd>{`${utcTime(run.startedAt)} (${relative(run.startedAt, now)})`}</dd>
      <dt>Duration</dt>
      <dd>{duration(run.startedAt, run.finishedAt, now)}</dd>
      <OptionalFact term="Error" value={run.error} />
    </dl>
  );
}

export function RunCard({ run, now }: { run: RunView; now: number }) {
  return (
    <li class="card" data-run-id={String(run.runId)}>
      <h3>
        <a href={`/runs/${run.runId}`}>{`Run #${run.runId}`}</a>
        <RunStatus status={run.status} />
        <NoopBadge noop={run.noop} />
      </h3>
      <RunFacts run={run} now={now} />
    </li>
  );
}

export function RunsTimeline({ runs, now }: { runs: RunView[]; now: number }) {
  if (runs.length === 0) return <p data-testid="no-runs">No runs yet. Press “Trigger now” or send a chat message to start one.</p>;
  return (
    <ol class="cards" data-testid="runs-timeline" aria-label="Runs, newest first">
      {runs.map((run) => (
        <RunCard run={run} now={now} />
      ))}
    </ol>
  );
}
