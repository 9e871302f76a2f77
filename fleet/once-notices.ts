/**
 * Notices that reach a human once (issue 21, part 5): the key of each (what it is about and the
 * episode: `idle:<instance>:<idleSince>`, `budget:<day>:80`, `expiry:<instance>:<endsAt>`), and
 * the notification written with its once-mark in the same batch. The mark is a plain insert on
 * `once_notices`' primary key: if another tick marked the key first, the insert fails and the
 * whole batch (this notification with it) rolls back, so a notice is never sent twice; and since
 * mark and notification commit together, a crash cannot leave a mark whose notice was never
 * stored. The check that asked reads the mark in the next snapshot and never asks again.
 */
import { and, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import type { NotifyDeps } from "../notify/notify-human.ts";
import { notificationStatements, type NotifyResult, type Severity } from "../notify/notify-human.ts";
import { notifications, onceNotices } from "../schema/index.ts";
import type { TickWrites } from "../pipeline/index.ts";

/** `<kind>:<subject>:<episode>`; the SQL form below builds the same text from columns. */
export function onceKey(kind: string, subject: string, episode: string | number): string {
  return `${kind}:${subject}:${episode}`;
}

/**
 * Once-marks whose key starts with `prefix`, as a range on the (agent, key) index: `like 'p%'` is
 * not indexed by SQLite (its LIKE ignores case), so it would scan every mark of the agent.
 */
export function keyStartsWith(prefix: string): SQL {
  const next = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return and(gte(onceNotices.key, prefix), lt(onceNotices.key, next))!;
}

/** The same key as `onceKey`, from an instance row's columns (for the tick snapshot's exists tests). */
export function onceKeySql(kind: string, subject: SQL, episode: SQL): SQL {
  return sql`${kind} || ':' || ${subject} || ':' || ${episode}`;
}

/** Whether the agent's once-mark under `key` exists (an index lookup on the primary key). */
export function onceMarked(agentId: string, key: SQL): SQL {
  return sql`exists (select 1 from ${onceNotices} o where o.agent_id = ${agentId} and o.key = ${key})`;
}

export interface OnceNotice {
  key: string;
  title: string;
  body: string;
  severity: Severity;
  instanceId?: string | null;
  /** The approval the notice is about (notifications.approvalId). */
  approvalId?: number | null;
}

/** The notice and its once-mark, as statements for the tick's write batch (no run sends it). */
export function onceNoticeStatements(deps: NotifyDeps, agentId: string, notice: OnceNotice): TickWrites<NotifyResult> {
  const now = deps.clock.now();
  const sent = notificationStatements(deps, {
    agentId,
    runId: null,
    title: notice.title,
    body: notice.body,
    severity: notice.severity,
    dedupKey: notice.key,
    instanceId: notice.instanceId ?? null,
    approvalId: notice.approvalId ?? null,
  });
  return {
    statements: [...sent.statements, markStatement(deps, agentId, notice.key, now, true)],
    after: (results) => sent.after(results.slice(0, sent.statements.length)),
  };
}

/** The once-mark alone (a notice superseded before it was sent: 80 % when 100 % is reached at once). */
export function markStatement(
  deps: Pick<NotifyDeps, "db" | "config">,
  agentId: string,
  key: string,
  now: number,
  withNotification = false,
) {
  const { db } = deps;
  // The notification stored now, or the one it folded into (inside the dedup window): read
  // through (agent, dedup key, created at), never the agent's whole history.
  const since = now - deps.config.notifyDedupWindowMs;
  const notificationId = withNotification
    ? sql`(select max(${notifications.id}) from ${notifications} where ${and(eq(notifications.agentId, agentId), eq(notifications.dedupKey, key), gte(notifications.createdAt, since))})`
    : sql`null`;
  return db.run(
    sql`insert into ${onceNotices} (agent_id, key, notification_id, at) values (${agentId}, ${key}, ${notificationId}, ${now})`,
  );
}
