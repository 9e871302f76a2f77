/**
 * Approvals page: destructive actions waiting for a human, with Approve / Reject, then history.
 * Each approval has an anchor (`#approval-<id>`), the target of the notification's link and of
 * the overview's attention strip. The list updates live (the script never swaps a region while
 * the operator is typing in it).
 */
import type { listApprovals } from "../fleet/approvals.ts";
import { ApprovalStatus, Badge } from "./badges.tsx";
import { relative, utcTime } from "./format.ts";
import { CsrfField } from "./layout.tsx";

export type ApprovalView = Awaited<ReturnType<typeof listApprovals>>[number];

function DecisionForm({ approval, csrf }: { approval: ApprovalView; csrf: string }) {
  const noteId = `note-${approval.id}`;
  return (
    <form method="post" action={`/approvals/${approval.id}`}>
      <CsrfField token={csrf} />
      <div class="field">
        <label for={noteId}>Note for the agent (optional)</label>
        <input type="text" id={noteId} name="note" maxlength={500} />
      </div>
      <div class="actions">
        <button type="submit" name="decision" value="approve" class="danger">
          {`Approve ${approval.kind}`}
        </button>
        <button type="submit" name="decision" value="reject" class="secondary">
          Reject
        </button>
      </div>
    </form>
  );
}

function ApprovalCard({ approval: a, csrf, now }: { approval: ApprovalView; csrf: string; now: number }) {
  return (
    <li class="card" data-approval-id={String(a.id)} id={`approval-${a.id}`}>
      <h3>
        {`${a.kind} ${a.instanceId ?? ""}`} <ApprovalStatus status={a.status} />
      </h3>
      <p class="said">{a.reason}</p>
      <p class="muted">
        {`Requested by ${a.requestedBy} ${relative(a.createdAt, now)}`}
        {a.runId !== null ? (
          <>
            {" in "}
            <a href={`/runs/${a.runId}`}>{`run #${a.runId}`}</a>
          </>
        ) : null}
        {a.decidedAt ? ` · decided${a.decidedBy ? ` by ${a.decidedBy}` : ""} ${utcTime(a.decidedAt)}` : ""}
        {a.note ? ` · note: ${a.note}` : ""}
      </p>
      {a.execution ? (
        <p>
          {"Action: "}
          <Badge tone={a.execution.status === "succeeded" ? "ok" : a.execution.status === "failed" ? "bad" : "info"}>{a.execution.status}</Badge>
          {a.execution.error ? ` (${a.execution.error})` : ""}
        </p>
      ) : null}
      {a.status === "pending" ? <DecisionForm approval={a} csrf={csrf} /> : null}
    </li>
  );
}

export function ApprovalsList({ approvals, csrf, now }: { approvals: ApprovalView[]; csrf: string; now: number }) {
  const pending = approvals.filter((a) => a.status === "pending");
  const decided = approvals.filter((a) => a.status !== "pending");
  return (
    <>
      <h2>Waiting for a decision</h2>
      {pending.length ? (
        <ul class="cards">
          {pending.map((a) => (
            <ApprovalCard approval={a} csrf={csrf} now={now} />
          ))}
        </ul>
      ) : (
        <p>Nothing is waiting for approval.</p>
      )}
      <h2>Decided</h2>
      {decided.length ? (
        <ul class="cards">
          {decided.map((a) => (
            <ApprovalCard approval={a} csrf={csrf} now={now} />
          ))}
        </ul>
      ) : (
        <p>No decisions yet.</p>
      )}
    </>
  );
}

export function ApprovalsPage({ approvals, csrf, now }: { approvals: ApprovalView[]; csrf: string; now: number }) {
  return (
    <div data-live="approvals">
      <ApprovalsList approvals={approvals} csrf={csrf} now={now} />
    </div>
  );
}
