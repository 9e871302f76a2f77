/**
 * The runs, newest first, as a compact table: one row per run with what woke it, who decided,
 * what it did in one line, its tokens and duration. Used by the Runs page (full), the overview
 * (latest few) and an instance's page, and re-rendered by the live updates. RunFacts is the
 * same facts as a list, for a run's own page.
 */
import { RunStatus } from "../shell/badges.tsx";
import { duration, relative, tokens, utcTime } from "../shell/format.ts";
import { OptionalFact } from "../shell/facts.tsx";
import { runNote } from "../../jobs/read-models/run-outcome.ts";
import type { RunRow, RunView } from "../../jobs/read-models/run-list.ts";

export type { RunRow, RunView } from "../../jobs/read-models/run-list.ts";

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

/** A run's facts on its own page: why, who decided, what it did, tokens, when, how long. */
export function RunFacts({ run, now, outcome }: { run: RunView; now: number; outcome: string }) {
  const note = runNote(run);
  return (
    <dl class="facts">
      <dt>Outcome</dt>
      <dd data-testid="run-outcome">{outcome}</dd>
      <dt>Triggers</dt>
      <dd>{triggerSummary(run)}</dd>
      <dt>Decider</dt>
      <dd>{deciderLabel(run.decider)}</dd>
      <dt>Session epoch</dt>
      <dd>{String(run.sessionEpoch)}</dd>
      <dt>Tokens</dt>
      <dd>{`${tokens(run.promptTokens)} prompt, ${tokens(run.completionTokens)} completion; largest prompt ${tokens(run.contextTokens)}`}</dd>
      <dt>Started</dt>
      <dd>{`${utcTime(run.startedAt)} (${relative(run.startedAt, now)})`}</dd>
      <dt>Duration</dt>
      <dd>{duration(run.startedAt, run.finishedAt, now)}</dd>
      <OptionalFact term={note?.term ?? "Error"} value={note?.text} />
    </dl>
  );
}

const compactTokens = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));

export function RunsTimeline({ runs, now, caption = "Runs, newest first" }: { runs: RunRow[]; now: number; caption?: string }) {
  if (runs.length === 0) return <p data-testid="no-runs">No runs yet. Press “Trigger now” or send a chat message to start one.</p>;
  return (
    <div class="table-wrap" tabindex={0} role="region" aria-label={caption}>
      <table class="runs stack" data-testid="runs-timeline">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Started</th>
            <th scope="col">Triggers</th>
            <th scope="col">Decider</th>
            <th scope="col">Outcome</th>
            <th scope="col">Tokens</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => {
            const note = runNote(run);
            return (
              <tr data-run-id={String(run.runId)}>
                <th scope="row">
                  <a href={`/runs/${run.runId}`}>{`#${run.runId}`}</a>
                </th>
                <td>
                  <time datetime={run.startedAt ?? undefined} title={utcTime(run.startedAt)}>
                    {relative(run.startedAt, now)}
                  </time>
                </td>
                <td>{triggerSummary(run)}</td>
                <td>{deciderLabel(run.decider)}</td>
                <td class="outcome">
                  <RunStatus status={run.status} /> <span data-role="outcome">{run.outcome}</span>
                  {note ? <span class="muted">{` ${note.term}: ${note.text.slice(0, 120)}`}</span> : null}
                </td>
                <td title={`${tokens(run.promptTokens)} prompt, ${tokens(run.completionTokens)} completion`}>
                  {compactTokens(run.promptTokens + run.completionTokens)}
                </td>
                <td>{duration(run.startedAt, run.finishedAt, now)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
