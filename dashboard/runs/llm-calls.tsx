/**
 * A run's LLM calls on its page (agent/llm/transcripts.ts): for each, the purpose, model and time,
 * the messages as sent (collapsed), and the tool calls and reply it got back, or its error. All
 * text goes through JSX, so it is escaped.
 */
import type { LlmCallView } from "../../agent/llm/transcripts.ts";
import { utcTime } from "../shell/format.ts";

const contentOf = (content: unknown) =>
  typeof content === "string" ? content : content === null || content === undefined ? "" : JSON.stringify(content);

export function LlmCalls({ calls }: { calls: readonly LlmCallView[] }) {
  if (calls.length === 0)
    return <p>No LLM calls were kept for this run (the rules policy decided, or they were pruned after LLM_TRANSCRIPT_DAYS).</p>;
  return (
    <ol class="cards" data-testid="run-llm-calls">
      {calls.map((call) => (
        <li class="card">
          <h3>{`Call ${call.seq} · ${call.purpose} · ${call.model}`}</h3>
          <p class="muted">{`${utcTime(call.createdAt)} · ${call.request.messages.length} messages, ${call.request.tools.length} tools sent`}</p>
          <details>
            <summary>Messages sent</summary>
            <ol>
              {call.request.messages.map((m) => (
                <li>
                  <strong>{m.role}</strong>
                  {m.role === "assistant" && m.tool_calls?.length ? (
                    <span class="muted">{` calls ${m.tool_calls.map((t) => (t.type === "function" ? t.function.name : t.type)).join(", ")}`}</span>
                  ) : null}
                  <pre class="said">{contentOf(m.content)}</pre>
                </li>
              ))}
            </ol>
          </details>
          {call.error !== null ? <p class="said">{`Failed: ${call.error}`}</p> : null}
          {call.toolCalls.map((t) => (
            <p>
              <strong>{`Asked for ${t.name}`}</strong> {t.arguments}
            </p>
          ))}
          {call.reply ? <p class="said">{call.reply}</p> : null}
        </li>
      ))}
    </ol>
  );
}
