/**
 * The agent's state at a glance (running or idle, next run, counters) and the context gauge
 * (tokens of the last prompt against the budget, and what compaction last did). Rendered on the
 * overview and re-rendered by the live updates.
 */
import type { AgentState, LastCompaction } from "../../jobs/read-models/overview.ts";
import { Badge } from "../shell/badges.tsx";
import { percent, tokens, utcTime } from "../shell/format.ts";
import { describeCompaction } from "../shell/readable.ts";

/** No ticking relative times here: the region is aria-live, so it should change only when the state does. */
export function StatePanel({ state }: { state: AgentState }) {
  return (
    <dl class="facts" data-testid="agent-state">
      <dt>Status</dt>
      <dd>{state.running ? <Badge tone="info">{`running run #${state.runningRunId}`}</Badge> : <Badge tone="neutral">idle</Badge>}</dd>
      <dt>Next run at</dt>
      <dd data-testid="next-run">{state.nextRunAt ? utcTime(state.nextRunAt) : "none scheduled"}</dd>
      <dt>Run counter</dt>
      <dd data-testid="run-counter">{String(state.runCounter)}</dd>
      <dt>Session epoch</dt>
      <dd data-testid="session-epoch">{String(state.sessionEpoch)}</dd>
      <dt>Events waiting</dt>
      <dd>{String(state.pendingEvents)}</dd>
      <dt>Pending wakes</dt>
      <dd>{String(state.pendingWakes)}</dd>
    </dl>
  );
}

export function ContextGauge({ state, compaction }: { state: AgentState; compaction: LastCompaction | null }) {
  const used = percent(state.contextTokens, state.contextBudget);
  return (
    <div>
      <label for="context-gauge">Context of the last prompt</label>
      <meter id="context-gauge" min={0} max={state.contextBudget} high={Math.round(state.contextBudget * 0.85)} value={state.contextTokens}>
        {`${used}%`}
      </meter>
      <p data-testid="context-tokens">
        {`${tokens(state.contextTokens)} of a ${tokens(state.contextBudget)} budget (${used}%).`}{" "}
        {state.contextTokens === 0 ? <span class="muted">No prompt has been sent to an LLM yet.</span> : null}
      </p>
      {compaction ? (
        <details>
          <summary>{`What compaction did in run #${compaction.runId}`}</summary>
          <ul>
            {describeCompaction(compaction.record).map((line) => (
              <li>{line}</li>
            ))}
          </ul>
        </details>
      ) : (
        <p class="muted">No run has needed compaction yet.</p>
      )}
    </div>
  );
}
