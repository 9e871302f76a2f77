/**
 * Telling a human once, outside the tick's write batch (a replacement's step, a proposal the
 * provider cannot carry out): the notice and its once-mark (fleet/once-notices.ts) in one batch.
 * A mark already there means the human was told: nothing is sent again, whoever asks.
 */
import { and, eq } from "drizzle-orm";
import type { NotifyDeps } from "../notify/notify-human.ts";
import { onceNotices } from "../schema/index.ts";
import { onceNoticeStatements, type OnceNotice } from "./once-notices.ts";

/** True when this call told the human; false when the once-mark was already there. */
export async function tellOnce(deps: NotifyDeps, agentId: string, notice: OnceNotice): Promise<boolean> {
  const marked = async () =>
    (
      await deps.db
        .select()
        .from(onceNotices)
        .where(and(eq(onceNotices.agentId, agentId), eq(onceNotices.key, notice.key)))
    ).length > 0;
  if (await marked()) return false;
  const writes = onceNoticeStatements(deps, agentId, notice);
  try {
    await writes.after(await deps.db.batch(writes.statements as [(typeof writes.statements)[number]]));
    return true;
  } catch (err) {
    // Another caller marked it between the read and the batch (the batch rolled back whole).
    if (await marked()) return false;
    throw err;
  }
}
