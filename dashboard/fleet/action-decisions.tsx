/**
 * How the dashboard shows the agent's decisions (issue #22): who decided each action (rules, the
 * model by name, or the operator), what justified it (its evidence: event ids, wake ids, the human
 * message), what shadow mode would have done ("would have restarted sim-1"), and the pause
 * switch. Used by the overview, the run page and the instance page.
 */
import type { presentAction } from "../../fleet/actions/actions.ts";
import type { ActionEvidence } from "../../fleet/actions/action-types.ts";
import { Badge } from "../shell/badges.tsx";
import { utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";

export type ActionView = ReturnType<typeof presentAction>;

const DONE: Record<string, string> = { start: "started", stop: "stopped", reboot: "restarted", destroy: "destroyed", label: "labelled" };

const TONES: Record<string, "ok" | "bad" | "warn" | "info" | "neutral"> = {
  succeeded: "ok",
  failed: "bad",
  rate_limited: "warn",
  refused: "warn",
  blocked: "neutral",
  awaiting_approval: "warn",
  approved: "ok",
  rejected: "neutral",
  proposed: "info",
};

/** "would have restarted sim-1" (or, for a kind that needs approval, "would have asked to destroy sim-3"). */
export function describeProposal(a: Pick<ActionView, "kind" | "instanceId" | "result">): string {
  const asked = (a.result as { approvalRequested?: unknown } | null)?.approvalRequested === false;
  return asked ? `would have asked a human to approve: ${a.kind} ${a.instanceId}` : `would have ${DONE[a.kind] ?? a.kind} ${a.instanceId}`;
}

/** The evidence line: what in the run justified it. */
export function describeEvidence(evidence: ActionEvidence | null): string {
  if (!evidence) return "no evidence recorded";
  const parts = [
    ...(evidence.eventIds.length ? [`events ${evidence.eventIds.map((id) => `#${id}`).join(", ")}`] : []),
    ...(evidence.wakeIds.length ? [`wakes ${evidence.wakeIds.map((id) => `#${id}`).join(", ")}`] : []),
    ...(evidence.humanMessage ? [`human message #${evidence.humanMessage.eventId}: "${evidence.humanMessage.text}"`] : []),
  ];
  return parts.length ? parts.join("; ") : "nothing in the run's input concerned it";
}

/** One action: when, what, who decided, outcome, why, and its evidence. */
export function ActionDecision({ a, showRun = true }: { a: ActionView; showRun?: boolean }) {
  return (
    <li data-action-status={a.status}>
      {`${utcTime(a.createdAt)}: ${a.status === "proposed" ? describeProposal(a) : `${a.kind} ${a.instanceId ?? ""}`} — decided by ${a.decider} `}
      <Badge tone={TONES[a.status] ?? "info"}>{a.status}</Badge>
      {showRun && a.runId !== null ? (
        <>
          {" in "}
          <a href={`/runs/${a.runId}`}>{`run #${a.runId}`}</a>
        </>
      ) : null}
      {a.reason ? ` — ${a.reason}` : ""}
      {a.error ? ` (${a.error})` : ""}
      <br />
      <span class="muted" data-testid="action-evidence">{`Evidence: ${describeEvidence(a.evidence)}`}</span>
    </li>
  );
}

export function ActionDecisions({ actions, empty, showRun = true }: { actions: readonly ActionView[]; empty: string; showRun?: boolean }) {
  if (actions.length === 0) return <p>{empty}</p>;
  return (
    <ul class="history" data-testid="action-decisions">
      {actions.map((a) => (
        <ActionDecision a={a} showRun={showRun} />
      ))}
    </ul>
  );
}

/** The pause switch: one click turns the agent to shadow mode, one click back to acting. */
export function ModeSwitch({ mode, proposals, csrf }: { mode: "act" | "shadow"; proposals: readonly ActionView[]; csrf: string }) {
  return (
    <div data-testid="mode-switch" data-mode={mode}>
      <p>
        {mode === "shadow" ? (
          <>
            <Badge tone="warn">shadow mode</Badge> Paused: decisions are recorded as proposals; nothing reaches the provider.
          </>
        ) : (
          <>
            <Badge tone="ok">acting</Badge> Decisions reach the provider (within the run and hour bounds).
          </>
        )}
      </p>
      <form method="post" action="/mode">
        <CsrfField token={csrf} />
        <input type="hidden" name="mode" value={mode === "shadow" ? "act" : "shadow"} />
        <button type="submit" class={mode === "shadow" ? undefined : "danger"}>
          {mode === "shadow" ? "Resume acting" : "Pause: shadow mode"}
        </button>
      </form>
      {proposals.length ? (
        <>
          <h3>Proposals (shadow mode)</h3>
          <ActionDecisions actions={proposals} empty="" />
        </>
      ) : null}
    </div>
  );
}
