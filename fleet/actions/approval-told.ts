/**
 * The follow-up a decided approval gets (issue #24, item 4): one notification saying who decided
 * and how ("Approved by alice: destroy sim-1"), whichever path decided it (API, dashboard, Slack),
 * so the "Approval needed" page is never the last word a channel shows. Told once per approval:
 * the once-mark `approval-decided:<id>` is written in the same batch as the notification
 * (fleet/once-notices.ts), so repeating a decision, or two hosts deciding at once, sends one.
 */
import { and, eq } from "drizzle-orm";
import type { NotifyDeps } from "../../notify/notify-human.ts";
import { onceNotices, type approvals } from "../../schema/index.ts";
import { onceKey, onceNoticeStatements } from "../once-notices.ts";
import { decidedMessage } from "./approval-messages.ts";

type ApprovalRow = typeof approvals.$inferSelect;

export function decidedKey(approvalId: number): string {
  return onceKey("approval-decided", String(approvalId), "1");
}

export async function tellDecidedOnce(deps: NotifyDeps, row: ApprovalRow): Promise<void> {
  const key = decidedKey(row.id);
  const [marked] = await deps.db
    .select({ key: onceNotices.key })
    .from(onceNotices)
    .where(and(eq(onceNotices.agentId, row.agentId), eq(onceNotices.key, key)));
  if (marked) return;
  const message = decidedMessage(deps.config, row, deps.clock.now());
  const notice = onceNoticeStatements(deps, row.agentId, {
    key,
    ...message,
    severity: "info",
    instanceId: row.instanceId,
    approvalId: row.id,
  });
  try {
    const results = await deps.db.batch(notice.statements as [(typeof notice.statements)[0], ...typeof notice.statements]);
    await notice.after(results as unknown[]);
  } catch (err) {
    // A concurrent decision's follow-up marked it first (the batch rolled back), or the database
    // failed: the decision stands either way; the approval page shows who decided.
    deps.log.error("decided-approval follow-up not sent", { agentId: row.agentId, approvalId: row.id, error: String(err) });
  }
}
