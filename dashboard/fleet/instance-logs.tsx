/**
 * An instance's container log on its page, for operators: read through the same provider call
 * and bounds as the agent's get_instance_logs tool (the last LOG_TAIL_DEFAULT_LINES lines, cut to
 * LOG_TAIL_MAX_CHARS), once per page view (never by the live updates), only when the provider has
 * the `logs` capability. The text is rendered escaped (JSX), and a provider error is shown as an
 * error, never as an empty log. Viewers get a note instead.
 */
import type { Deps } from "../../jobs/deps.ts";
import { LOG_TAIL_DEFAULT_LINES, LOG_TAIL_MAX_CHARS } from "../../agent/tools/fleet-read.ts";
import type { Viewer } from "../shell/can.ts";

export type LogsView =
  | { kind: "shown"; text: string; truncated: boolean }
  | { kind: "error"; message: string }
  | { kind: "not-allowed" }
  | { kind: "unsupported"; provider: string };

export async function loadLogs(deps: Deps, viewer: Viewer, instanceId: string): Promise<LogsView> {
  if (!deps.provider.capabilities.has("logs")) return { kind: "unsupported", provider: deps.provider.kind };
  if (!viewer.can("readLogs")) return { kind: "not-allowed" };
  try {
    const logs = await deps.provider.logs(instanceId, { tailLines: LOG_TAIL_DEFAULT_LINES, maxChars: LOG_TAIL_MAX_CHARS });
    return { kind: "shown", text: logs.text, truncated: logs.truncated };
  } catch (err) {
    return { kind: "error", message: err instanceof Error ? err.message : String(err) };
  }
}

function LogsBody({ logs }: { logs: LogsView }) {
  switch (logs.kind) {
    case "unsupported":
      return <p class="muted">{`The ${logs.provider} provider has no container logs.`}</p>;
    case "not-allowed":
      return <p class="muted">Container logs are shown to operators (this needs the operator role).</p>;
    case "error":
      return (
        <p class="error" role="alert">
          {`The provider could not get the logs: ${logs.message}`}
        </p>
      );
    case "shown":
      return (
        <>
          <p class="muted">{`The last ${LOG_TAIL_DEFAULT_LINES} lines${logs.truncated ? `, cut to the last ${LOG_TAIL_MAX_CHARS} characters` : ""}, as the agent reads them; as of this page load.`}</p>
          {logs.text ? (
            <pre class="log" tabindex={0} data-testid="instance-log">
              {logs.text}
            </pre>
          ) : (
            <p>The log is empty.</p>
          )}
        </>
      );
  }
}

export function LogsPanel({ logs }: { logs: LogsView }) {
  return (
    <section class="panel" aria-labelledby="logs-heading">
      <h2 id="logs-heading">Container log</h2>
      <LogsBody logs={logs} />
    </section>
  );
}
