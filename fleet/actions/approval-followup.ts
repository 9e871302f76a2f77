/**
 * What happens to an approval nobody decides (issue #24, item 4), a check of the cron tick:
 * - past `expiresAt` (APPROVAL_EXPIRES_S) a pending approval becomes `expired` and does nothing:
 *   the conditional update (still pending) means a concurrent decision wins or the expiry does,
 *   exactly once; the action it held is closed; the agent gets an `approval` event (dedup key
 *   `approval:<id>`, the decision's own, written only where this expiry happened) and a human is
 *   told once (once-mark `approval-expired:<id>:1`). The notice is sent right after the commit,
 *   and a tick later for an expiry whose notice a crash lost (the snapshot lists expired
 *   approvals without their mark).
 * - older than APPROVAL_REMIND_S (0 = never) and not reminded: one reminder; `remindedAt` is set
 *   in the same conditional update, so each approval is reminded at most once.
 * Each tick handles at most FOLLOWUPS_PER_TICK approvals of each kind.
 */
import { and, asc, eq, gt, isNull, lte, or, sql } from "drizzle-orm";
import type { NotifyDeps } from "../../notify/notify-human.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { actions, approvals, events, onceNotices } from "../../schema/index.ts";
import {
  combineWrites,
  debounceWindow,
  defineTickCheck,
  publishAfterIngest,
  scheduleIfPending,
  type PipelineDeps,
  type TickWrites,
} from "../../pipeline/index.ts";
import { insertWhere } from "../../db/insert-where.ts";
import { onceKey, onceNoticeStatements } from "../once-notices.ts";
import { expiredMessage, reminderMessage } from "./approval-messages.ts";

export const FOLLOWUPS_PER_TICK = 20;

type ApprovalRow = typeof approvals.$inferSelect;

export const expiredKey = (approvalId: number) => onceKey("approval-expired", String(approvalId), "1");

export interface FollowupReport {
  expired: number[];
  reminded: number[];
  announced: number[];
}

export const followUpApprovals = defineTickCheck({
  name: "followUpApprovals",
  reads(deps: PipelineDeps, agentId: string, now: number) {
    const { db } = deps;
    const pending = and(eq(approvals.agentId, agentId), eq(approvals.status, "pending"));
    const remindBefore = now - deps.config.approvalRemindMs;
    return {
      expiring: db
        .select()
        .from(approvals)
        .where(and(pending, lte(approvals.expiresAt, now)))
        .orderBy(asc(approvals.expiresAt))
        .limit(FOLLOWUPS_PER_TICK),
      reminding:
        deps.config.approvalRemindMs > 0
          ? db
              .select()
              .from(approvals)
              .where(
                and(
                  pending,
                  isNull(approvals.remindedAt),
                  lte(approvals.createdAt, remindBefore),
                  or(isNull(approvals.expiresAt), gt(approvals.expiresAt, now)),
                ),
              )
              .limit(FOLLOWUPS_PER_TICK)
          : db.select().from(approvals).where(sql`0`),
      unannounced: db
        .select()
        .from(approvals)
        .where(
          and(
            eq(approvals.agentId, agentId),
            eq(approvals.status, "expired"),
            sql`not exists (select 1 from ${onceNotices} o where o.agent_id = ${agentId} and o.key = 'approval-expired:' || ${approvals.id} || ':1')`,
          ),
        )
        .limit(FOLLOWUPS_PER_TICK),
    };
  },
  decide(deps: PipelineDeps, agentId: string, rows, tick): TickWrites<FollowupReport> {
    const { now } = tick;
    const expiring = combineWrites(rows.expiring.map((row) => expireWrites(deps, row, now)));
    const reminding = combineWrites(rows.reminding.map((row) => remindWrites(deps, row, now)));
    const announcing = combineWrites(rows.unannounced.map((row) => announceWrites(deps, row, now)));
    const parts = [expiring, reminding, announcing];
    return {
      statements: parts.flatMap((p) => p.statements),
      async after(results) {
        const [e, r] = [expiring.statements.length, reminding.statements.length];
        const expired = (await expiring.after(results.slice(0, e))).filter((id): id is number => id !== null);
        const reminded = (await reminding.after(results.slice(e, e + r))).filter((id): id is number => id !== null);
        const announced = (await announcing.after(results.slice(e + r))).filter((id): id is number => id !== null);
        for (const id of expired) {
          const row = rows.expiring.find((x) => x.id === id)!;
          await announceNow(deps, { ...row, status: "expired", decidedAt: now }, now);
        }
        if (expired.length || reminded.length) deps.log.info("approvals followed up", { agentId, expired, reminded });
        return { expired, reminded, announced: [...announced, ...expired] };
      },
    };
  },
});

/** The expiry: status, the held action closed, and the agent's event, each only where it expired. */
function expireWrites(deps: PipelineDeps, row: ApprovalRow, now: number): TickWrites<number | null> {
  const { db } = deps;
  const dedupKey = `approval:${row.id}`;
  const expiredNow = sql`exists (select 1 from ${approvals} where ${approvals.id} = ${row.id} and ${approvals.status} = 'expired' and ${approvals.decidedAt} = ${now})`;
  const statements = [
    db
      .update(approvals)
      .set({ status: "expired", decidedAt: now })
      .where(and(eq(approvals.id, row.id), eq(approvals.status, "pending")))
      .returning({ id: approvals.id }),
    db
      .update(actions)
      .set({ status: "failed", error: "approval expired: nobody decided in time, nothing was done", finishedAt: now })
      .where(
        and(eq(actions.agentId, row.agentId), sql`${actions.approvalId} = ${row.id}`, eq(actions.status, "awaiting_approval"), expiredNow),
      ),
    insertWhere(
      db,
      events,
      {
        agentId: row.agentId,
        source: "approval",
        priority: 0,
        dedupKey,
        payload: {
          approvalId: row.id,
          decision: "expired",
          operator: null,
          note: null,
          kind: row.kind,
          instanceId: row.instanceId,
          reason: row.reason,
          action: null,
        },
        createdAt: now,
      },
      expiredNow,
    ).onConflictDoNothing(),
    scheduleIfPending(deps, { agentId: row.agentId, dedupKey, target: now + debounceWindow(deps.config, 0) }),
  ];
  return {
    statements,
    async after(results) {
      const [updated, , , moved] = results as [{ id: number }[], unknown, unknown, { slot: number; runAt: number | null }[]];
      await publishAfterIngest(deps, row.agentId, moved[0]);
      return updated[0]?.id ?? null;
    },
  };
}

function remindWrites(deps: NotifyDeps, row: ApprovalRow, now: number): TickWrites<number | null> {
  return {
    statements: [
      deps.db
        .update(approvals)
        .set({ remindedAt: now })
        .where(and(eq(approvals.id, row.id), eq(approvals.status, "pending"), isNull(approvals.remindedAt)))
        .returning({ id: approvals.id }),
    ],
    async after(results) {
      const [updated] = results as [{ id: number }[]];
      if (!updated[0]) return null;
      const message = reminderMessage(deps.config, row, now);
      await notifyHuman(deps, {
        agentId: row.agentId,
        runId: null,
        ...message,
        severity: "warning",
        dedupKey: `approval-reminder:${row.id}`,
        instanceId: row.instanceId,
        approvalId: row.id,
        bounded: false,
      });
      return row.id;
    },
  };
}

/** The told-once expiry notice with its mark, for the write batch (a notice a crash lost). */
function announceWrites(deps: NotifyDeps, row: ApprovalRow, now: number): TickWrites<number | null> {
  const notice = onceNoticeStatements(deps, row.agentId, {
    key: expiredKey(row.id),
    ...expiredMessage(deps.config, row, now),
    severity: "warning",
    instanceId: row.instanceId,
    approvalId: row.id,
  });
  return { statements: notice.statements, after: async (results) => (await notice.after(results), row.id) };
}

/** The expiry notice right after the commit; a mark already there (told) leaves it alone. */
async function announceNow(deps: NotifyDeps, row: ApprovalRow, now: number): Promise<void> {
  const notice = announceWrites(deps, row, now);
  try {
    await notice.after((await deps.db.batch(notice.statements as [never, ...never[]])) as unknown[]);
  } catch (err) {
    deps.log.error("approval expiry notice not sent now; the next tick retries unless it was told", {
      approvalId: row.id,
      error: String(err),
    });
  }
}
