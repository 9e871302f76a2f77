/**
 * One run's page: why it ran (the events and wakes it consumed), what it did (its turns: tool
 * calls with their results, or the rules policy's decisions), what it said (the reply), what it
 * scheduled, and what compaction did, all in words. A running run's page updates live.
 */
import { NoopBadge, RunStatus, WakeStatus } from "../shell/badges.tsx";
import { tokens, utcTime } from "../shell/format.ts";
import { describeCompaction, describeEvent, keyValues } from "../shell/readable.ts";
import { ActionDecisions, type ActionView } from "../fleet/action-decisions.tsx";
import type { RunRecord } from "../../jobs/read-models/run-record.ts";
import { RunFacts } from "./runs-timeline.tsx";
import { LlmCalls } from "./llm-calls.tsx";
import { ReplayPanel } from "./replay-panel.tsx";

function ConsumedEvents({ events }: { events: RunRecord["events"] }) {
  if (events.length === 0) return <p>No inbox events.</p>;
  return (
    <ul class="cards">
      {events.map((e) => (
        <li class="card">
          <h3>{`Event #${e.id} · ${e.source}`}</h3>
          <p class="muted">{`received ${utcTime(e.createdAt)}${e.attempts > 0 ? ` · retried ${e.attempts}×` : ""}${e.status === "dropped" ? ` · dropped (${e.dropReason ?? "no reason"})` : ""}`}</p>
          <p class="said">{describeEvent(e.source, e.payload)}</p>
        </li>
      ))}
    </ul>
  );
}

function WakeRows({ wakes, empty }: { wakes: RunRecord["consumedWakes"]; empty: string }) {
  if (wakes.length === 0) return <p>{empty}</p>;
  return (
    <ul>
      {wakes.map((w) => (
        <li>
          {`Wake #${w.id} due ${utcTime(w.dueAt)}: ${w.reason} `}
          <WakeStatus status={w.status} />
          {w.dropReason ? ` (${w.dropReason} after ${w.attempts} attempts)` : null}
        </li>
      ))}
    </ul>
  );
}

function Turns({ turns }: { turns: RunRecord["turns"] }) {
  if (turns.length === 0) return <p>No conversation turns were recorded (a no-op run, or no LLM decided).</p>;
  return (
    <ol class="cards" data-testid="run-turns">
      {turns.map((t) => (
        <li class="card">
          <h3>
            {t.role === "tool"
              ? `Tool result${t.toolCallId ? ` for ${t.toolCallId}` : ""}`
              : t.role === "user" && t.operator
                ? `user (messages from ${t.operator})`
                : t.role}
          </h3>
          {t.toolCalls.map((call) => (
            <div>
              <p>
                <strong>{`Calls ${call.name}`}</strong>
                {` with ${keyValues(call.arguments)}`} <span class="muted">{call.id}</span>
              </p>
            </div>
          ))}
          {t.content ? <p class="said">{t.role === "tool" ? keyValues(t.content, "\n") : t.content}</p> : null}
          <p class="muted">{tokens(t.tokens)}</p>
        </li>
      ))}
    </ol>
  );
}

function Compaction({ record }: { record: unknown }) {
  const lines = describeCompaction(record);
  if (lines.length === 0) return <p>No compaction record (no LLM call was made).</p>;
  return (
    <ul data-testid="run-compaction">
      {lines.map((line) => (
        <li>{line}</li>
      ))}
    </ul>
  );
}

/** The live part of a run's page (everything below the back link). */
export function RunDetail({ record, now, actions }: { record: RunRecord; now: number; actions?: readonly ActionView[] }) {
  const { run } = record;
  return (
    <>
      <section class="panel" aria-labelledby="summary-heading">
        <h2 id="summary-heading">Summary</h2>
        <p>
          <RunStatus status={run.status} /> <NoopBadge noop={run.noop} />
        </p>
        <RunFacts run={run} now={now} outcome={record.outcome} />
      </section>
      <h2>Reply</h2>
      {run.reply ? (
        <p class="said reply" data-testid="run-reply">
          {run.reply}
        </p>
      ) : (
        <p>No reply (only runs that consumed a chat message reply).</p>
      )}
      <h2>Events consumed</h2>
      <ConsumedEvents events={record.events} />
      <h2>Wakes consumed</h2>
      <WakeRows wakes={record.consumedWakes} empty="No wakes." />
      <h2>{run.decider === "rules" ? "Decisions" : "Tool calls and results"}</h2>
      <Turns turns={record.turns} />
      {actions ? (
        <>
          <h2>Actions it decided</h2>
          <ActionDecisions actions={actions} empty="No actions." showRun={false} />
        </>
      ) : null}
      <h2>LLM calls</h2>
      <LlmCalls calls={record.llmCalls} />
      <h2>Wakes it scheduled</h2>
      <WakeRows wakes={record.createdWakes} empty="None." />
      <h2>Compaction</h2>
      <Compaction record={run.compaction} />
    </>
  );
}

export function RunDetailPage({
  record,
  now,
  actions,
  csrf,
  canReplay,
}: {
  record: RunRecord;
  now: number;
  actions?: readonly ActionView[];
  csrf: string;
  canReplay: boolean;
}) {
  return (
    <>
      <p>
        <a href="/runs">← All runs</a>
      </p>
      {record.run.status === "running" ? (
        <div data-live="run">
          <RunDetail record={record} now={now} actions={actions} />
        </div>
      ) : (
        <RunDetail record={record} now={now} actions={actions} />
      )}
      <ReplayPanel runId={record.run.runId} csrf={canReplay ? csrf : null} last={record.replay} />
    </>
  );
}
