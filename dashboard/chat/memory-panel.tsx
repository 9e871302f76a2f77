/**
 * The agent's pinned memory as a human sees it: every fact with its key, the run that wrote it,
 * when, and the untrusted mark (written by a run whose input held text no operator typed: see
 * agent/prompt/untrusted-input.ts), each with a Delete button (operators; a CSRF-checked post).
 */
import { Badge } from "../shell/badges.tsx";
import { utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";

export interface MemoryFactRow {
  key: string;
  fact: string;
  untrusted: boolean;
  createdByRun: number | null;
  updatedAt: number;
}

export function MemoryPanel({ facts, csrf, canDelete }: { facts: readonly MemoryFactRow[]; csrf: string; canDelete: boolean }) {
  if (facts.length === 0) return <p>No pinned facts: the agent has remembered nothing.</p>;
  return (
    <ul class="cards" data-testid="memory-facts">
      {facts.map((f) => (
        <li class="card">
          <h3>
            {f.key} {f.untrusted ? <Badge tone="warn">untrusted</Badge> : null}
          </h3>
          <p class="said">{f.fact}</p>
          <p class="muted">
            {f.createdByRun === null ? (
              `saved ${utcTime(f.updatedAt)}`
            ) : (
              <>
                saved by <a href={`/runs/${f.createdByRun}`}>{`run #${f.createdByRun}`}</a>
                {` ${utcTime(f.updatedAt)}`}
              </>
            )}
            {f.untrusted ? " · the run that wrote it had read text no operator typed (an instance report, a wake, provider output)" : null}
          </p>
          {canDelete ? (
            <form method="post" action={`/memory/${encodeURIComponent(f.key)}/delete`} data-confirm={`Delete the fact ${f.key}?`}>
              <CsrfField token={csrf} />
              <button type="submit" class="secondary">
                Delete
              </button>
            </form>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
