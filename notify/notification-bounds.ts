/**
 * The run bounds on notifications (issue #22): at most NOTIFICATIONS_PER_RUN new notifications
 * per run and NOTIFICATIONS_PER_HOUR per agent from runs (notices no run makes are not counted:
 * they are exempt). Folding a repeat into a stored notification sends nothing and is not counted.
 * `underNotificationBounds` is a condition for the storing INSERT itself, so concurrent writers
 * cannot both slip under a bound; `notificationBoundRefusal` says which bound refused, for the
 * model and the notice. An approval's page and the told-once notice are not counted (their own
 * bounds stop them); their dedup-key prefixes are reserved (notify_human refuses them).
 */
import { and, eq, gt, isNotNull, notLike, sql, type SQL } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { HOUR_MS } from "../runtime/time.ts";
import { notifications } from "../schema/index.ts";

type Deps = Pick<PipelineDeps, "db" | "config" | "clock">;

/** Dedup-key prefixes of the notifications that other bounds stop: never counted here. */
export const RESERVED_DEDUP_PREFIXES = ["approval:", "bound:"] as const;
const counted = and(...RESERVED_DEDUP_PREFIXES.map((p) => notLike(notifications.dedupKey, `${p}%`)));
const ofRun = (agentId: string, runId: number) => and(eq(notifications.agentId, agentId), eq(notifications.runId, runId), counted);
const ofHour = (agentId: string, now: number) =>
  and(eq(notifications.agentId, agentId), isNotNull(notifications.runId), gt(notifications.createdAt, now - HOUR_MS), counted);

/** SQL: the run and the agent's last hour are both under their notification bounds. */
export function underNotificationBounds(deps: Pick<PipelineDeps, "config">, agentId: string, runId: number, now: number): SQL {
  const { notificationsPerRun, notificationsPerHour } = deps.config.bounds;
  return sql`(select count(*) from ${notifications} where ${ofRun(agentId, runId)}) < ${notificationsPerRun}
    and (select count(*) from ${notifications} where ${ofHour(agentId, now)}) < ${notificationsPerHour}`;
}

/** The sentence a refused notification answers with: which bound, and its setting. */
export async function notificationBoundRefusal(deps: Deps, agentId: string, runId: number | null): Promise<string> {
  const { notificationsPerRun, notificationsPerHour } = deps.config.bounds;
  const now = deps.clock.now();
  const [row] = await deps.db
    .select({
      run: runId === null ? sql<number>`0` : sql<number>`(select count(*) from ${notifications} where ${ofRun(agentId, runId)})`,
      hour: sql<number>`(select count(*) from ${notifications} where ${ofHour(agentId, now)})`,
    })
    .from(sql`(select 1)`);
  if (Number(row?.run ?? 0) >= notificationsPerRun) {
    return `refused: this run already sent ${notificationsPerRun} notifications (NOTIFICATIONS_PER_RUN); put everything else into one of them next run`;
  }
  return `refused: this agent's runs sent ${notificationsPerHour} notifications in the last hour (NOTIFICATIONS_PER_HOUR); nothing more is sent until the hour frees`;
}
