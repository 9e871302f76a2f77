/**
 * "Replay with…" on a run's page: a form naming the model (empty: the agent's configured one)
 * that replays the run without side effects (agent/llm/replay.ts), and the last replay's result.
 */
import type { lastReplay } from "../../agent/llm/replay.ts";
import { Badge } from "../shell/badges.tsx";
import { utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";

type Replay = NonNullable<Awaited<ReturnType<typeof lastReplay>>>;

const calls = (list: readonly { name: string; arguments: string }[]) =>
  list.length ? list.map((c) => `${c.name} ${c.arguments}`).join("; ") : "none";

/** `csrf` null: the viewer may not replay, and no form is shown. */
export function ReplayPanel({ runId, csrf, last }: { runId: number; csrf: string | null; last: Replay | null }) {
  return (
    <section class="panel" aria-labelledby="replay-heading">
      <h2 id="replay-heading">Replay</h2>
      {csrf === null ? null : (
        <form method="post" action={`/runs/${runId}/replay`}>
          <CsrfField token={csrf} />
          <label>
            Replay with model <input name="model" placeholder="the agent's configured model" maxlength={200} />
          </label>{" "}
          <button type="submit" class="secondary">
            Replay
          </button>
        </form>
      )}
      <p class="muted">
        The run's first request goes to the model again; tools are not executed (a call the run made gets its recorded result).
      </p>
      {last ? (
        <div data-testid="run-replay">
          <p>
            {last.result.same ? <Badge tone="ok">same</Badge> : <Badge tone="warn">different</Badge>}
            {` Last replay: ${last.model}, by ${last.operator}, ${utcTime(last.createdAt)}`}
          </p>
          <dl class="facts">
            <dt>The run's tool calls</dt>
            <dd>{calls(last.result.original.toolCalls)}</dd>
            <dt>The replay's tool calls</dt>
            <dd>{calls(last.result.replay.toolCalls)}</dd>
            <dt>The run's reply</dt>
            <dd>{last.result.original.reply ?? "none"}</dd>
            <dt>The replay's reply</dt>
            <dd>{last.result.replay.reply ?? "none"}</dd>
          </dl>
          {last.result.differences.length ? (
            <ul>
              {last.result.differences.map((d) => (
                <li>{d}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
