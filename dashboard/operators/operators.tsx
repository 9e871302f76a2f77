/**
 * Operators page (admins only): who may operate this deployment and with which role, a form to
 * add one (its token is shown once, on the page that answers the form), revoke buttons, and the
 * activity log naming the operator behind every human decision.
 */
import type { listActivity } from "../../auth/activity.ts";
import type { listOperators } from "../../auth/operators-store.ts";
import { ROLES } from "../../auth/roles.ts";
import { utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";

type OperatorView = Awaited<ReturnType<typeof listOperators>>[number];
type ActivityView = Awaited<ReturnType<typeof listActivity>>[number];

export interface OperatorsPageProps {
  operators: OperatorView[];
  activity: ActivityView[];
  csrf: string;
  /** Just created: its name and token, shown this once. */
  created?: { name: string; token: string } | null;
  error?: string | null;
}

function NewOperatorForm({ csrf }: { csrf: string }) {
  return (
    <form method="post" action="/operators" class="panel">
      <CsrfField token={csrf} />
      <div class="field">
        <label for="operator-name">Name</label>
        <input id="operator-name" name="name" required maxlength={64} />
      </div>
      <div class="field">
        <label for="operator-role">Role</label>
        <select id="operator-role" name="role">
          {ROLES.map((r) => (
            <option value={r} selected={r === "operator"}>
              {r}
            </option>
          ))}
        </select>
      </div>
      <button type="submit">Add operator</button>
    </form>
  );
}

export function OperatorsPage(props: OperatorsPageProps) {
  return (
    <>
      {props.created ? (
        <p class="notice" role="status" data-testid="new-operator-token">
          {`Token for ${props.created.name} (shown once, store it now): `}
          <code>{props.created.token}</code>
        </p>
      ) : null}
      {props.error ? (
        <p class="error" role="alert">
          {props.error}
        </p>
      ) : null}
      <p class="muted">
        viewer reads; operator also chats, triggers, approves or rejects, resets, deletes memory facts and replays runs; admin also manages
        operators. The holder of ADMIN_TOKEN is the bootstrap admin, named "admin".
      </p>
      <div class="table-wrap" tabindex={0} role="region" aria-label="Operators">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Role</th>
              <th>Added</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {props.operators.map((o) => (
              <tr data-operator-id={String(o.id)}>
                <td>{o.name}</td>
                <td>{o.role}</td>
                <td>{`${utcTime(o.createdAt)} by ${o.createdBy}`}</td>
                <td>
                  {o.revokedAt ? (
                    `revoked ${utcTime(o.revokedAt)}`
                  ) : (
                    <form method="post" action={`/operators/${o.id}/revoke`}>
                      <CsrfField token={props.csrf} />
                      <button type="submit" class="danger">{`Revoke ${o.name}`}</button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Add an operator</h2>
      <NewOperatorForm csrf={props.csrf} />
      <h2>Activity</h2>
      <ul class="activity">
        {props.activity.map((a) => (
          <li data-activity-id={String(a.id)}>
            {`${utcTime(a.at)} · ${a.operator} · ${a.action}${a.agentId ? ` · ${a.agentId}` : ""}${a.subject ? ` · ${a.subject}` : ""}`}
          </li>
        ))}
      </ul>
    </>
  );
}
