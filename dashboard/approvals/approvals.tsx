/**
 * Approvals page: destructive actions waiting for a human, with Approve / Reject, then history.
 * Each approval has an anchor (`#approval-<id>`), the target of the notification's link and of
 * the overview's attention strip. The list updates live (the script never swaps a region while
 * the operator is typing in it). Each card shows what the approver needs (issue #24, item 4):
 * the instance (linked), its GPU, $/h, state and for how long when asked, why, who asked, and when
 * an undecided one expires. Decide forms are rendered only for a role that may decide.
 */
import { NEEDS } from "../shell/can.ts";
import type { listApprovals } from "../../fleet/actions/approvals.ts";
import { describeContext, storedContext } from "../../fleet/actions/approval-context.ts";
import { hasRole, type Role } from "../../auth/roles.ts";
import { ApprovalStatus, Badge } from "../shell/badges.tsx";
import { relative, utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";

export type ApprovalView = Awaited<ReturnType<typeof listApprovals>>[number];

function DecisionForm({ approval, csrf }: { approval: ApprovalView; csrf: string }) {
  const noteId = `note-${approval.id}`;
  return (
    <form method="post" action={`/approvals/${approval.id}`} class="decide thumb">
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

/**
 * Whether the signed-in role may approve or reject (operator and up). A minimal local check: the
 * shared role helper (dashboard/shell/can.ts) is another engineer's, and replaces this when merged.
 */
/** Whether `role` may decide approvals (dashboard/shell/can.ts, ability `decide`). */
export const canDecide = (role: Role) => hasRole({ operatorId: -1, name: "", role }, NEEDS.decide);

function ApprovalCard({ approval: a, csrf, now, role }: { approval: ApprovalView; csrf: string; now: number; role: Role }) {
  return (
    <li class="card" data-approval-id={String(a.id)} id={`approval-${a.id}`}>
      <h3>
        {a.kind} {a.instanceId ? <a href={`/fleet/${encodeURIComponent(a.instanceId)}`}>{a.instanceId}</a> : null}{" "}
        <ApprovalStatus status={a.status} />
      </h3>
      <p class="said">{a.reason}</p>
      <p class="context">
        {describeContext(storedContext(a.context), Date.parse(a.createdAt))}
        {" (when asked)"}
      </p>
      <p class="muted">
        {`Requested by ${a.requestedByOperator ?? a.requestedBy} ${relative(a.createdAt, now)}`}
        {a.runId !== null ? (
          <>
            {" in "}
            <a href={`/runs/${a.runId}`}>{`run #${a.runId}`}</a>
          </>
        ) : null}
        {a.decidedAt ? ` · decided${a.decidedBy ? ` by ${a.decidedBy}` : ""} ${utcTime(a.decidedAt)}` : ""}
        {a.note ? ` · note: ${a.note}` : ""}
        {a.status === "pending" && a.expiresAt ? ` · expires ${utcTime(a.expiresAt)} and then does nothing` : ""}
      </p>
      {a.execution ? (
        <p>
          {"Action: "}
          <Badge tone={a.execution.status === "succeeded" ? "ok" : a.execution.status === "failed" ? "bad" : "info"}>
            {a.execution.status}
          </Badge>
          {a.execution.error ? ` (${a.execution.error})` : ""}
        </p>
      ) : null}
      {a.status === "pending" && canDecide(role) ? <DecisionForm approval={a} csrf={csrf} /> : null}
    </li>
  );
}

export function ApprovalsList({
  approvals,
  csrf,
  now,
  role = "viewer",
}: {
  approvals: ApprovalView[];
  csrf: string;
  now: number;
  role?: Role;
}) {
  const pending = approvals.filter((a) => a.status === "pending");
  const decided = approvals.filter((a) => a.status !== "pending");
  return (
    <>
      <h2>Waiting for a decision</h2>
      {pending.length ? (
        <ul class="cards">
          {pending.map((a) => (
            <ApprovalCard approval={a} csrf={csrf} now={now} role={role} />
          ))}
        </ul>
      ) : (
        <p>Nothing is waiting for approval.</p>
      )}
      <h2>Decided</h2>
      {decided.length ? (
        <ul class="cards">
          {decided.map((a) => (
            <ApprovalCard approval={a} csrf={csrf} now={now} role={role} />
          ))}
        </ul>
      ) : (
        <p>No decisions yet.</p>
      )}
    </>
  );
}

export function ApprovalsPage({ approvals, csrf, now, role }: { approvals: ApprovalView[]; csrf: string; now: number; role: Role }) {
  return (
    <div data-live="approvals">
      {canDecide(role) ? null : <p class="muted">You can read approvals; deciding them needs the operator role.</p>}
      <ApprovalsList approvals={approvals} csrf={csrf} now={now} role={role} />
    </div>
  );
}
