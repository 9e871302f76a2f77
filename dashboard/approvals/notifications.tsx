/**
 * Notifications page: what the agent told humans, and whether each channel got it. A
 * notification about an approval links to that approval on the Approvals page. A failed delivery
 * shows its HTTP status; the receiver's answer only when the list was read for an admin.
 */
import type { NotificationView } from "../../notify/list-notifications.ts";
import { Badge, Severity } from "../shell/badges.tsx";
import { relative, utcTime } from "../shell/format.ts";

/** The approval a notification is about (its dedup key is `approval:<id>`), or null. */
export const approvalOf = (n: Pick<NotificationView, "dedupKey">): number | null => {
  const match = n.dedupKey.match(/^approval:(\d+)$/);
  return match ? Number(match[1]) : null;
};

/** A failed try as its viewer may see it: the error text for admins (given), else the HTTP status only. */
const deliveryProblem = (d: NotificationView["deliveries"][number]): string =>
  d.lastError ? ` (${d.lastError})` : d.lastStatus !== null ? ` (HTTP ${d.lastStatus})` : "";

export function NotificationsList({ notifications, now }: { notifications: NotificationView[]; now: number }) {
  if (notifications.length === 0) return <p>No notifications yet.</p>;
  return (
    <ul class="cards">
      {notifications.map((n) => (
        <li class="card" data-notification-id={String(n.id)}>
          <h3>
            <Severity severity={n.severity} /> {n.title}
          </h3>
          <p class="said">{n.body}</p>
          {approvalOf(n) !== null ? (
            <p>
              <a href={`/approvals#approval-${approvalOf(n)}`}>{`Decide on approval #${approvalOf(n)}`}</a>
            </p>
          ) : null}
          <p class="muted">
            {`${utcTime(n.createdAt)} (${relative(n.createdAt, now)})`}
            {n.runId !== null ? (
              <>
                {" · from "}
                <a href={`/runs/${n.runId}`}>{`run #${n.runId}`}</a>
              </>
            ) : null}
            {n.repeats > 0 ? ` · repeated ${n.repeats} more time${n.repeats === 1 ? "" : "s"}` : ""}
          </p>
          {n.deliveries.length ? (
            <ul>
              {n.deliveries.map((d) => (
                <li>
                  {`${d.channel}: `}
                  <Badge tone={d.status === "delivered" ? "ok" : d.status === "failed" ? "bad" : "info"}>{d.status}</Badge>
                  {deliveryProblem(d)}
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">Shown here only (no outbound channel configured).</p>
          )}
        </li>
      ))}
    </ul>
  );
}

export function NotificationsPage({ notifications, now }: { notifications: NotificationView[]; now: number }) {
  return (
    <div data-live="notifications">
      <NotificationsList notifications={notifications} now={now} />
    </div>
  );
}
