/**
 * Tells a human about poison (invariant 9): every event or wake the claim dropped because failed
 * or crashed runs handed it back MAX_EVENT_ATTEMPTS times gets exactly one notification, saying
 * which it was, how often it was attempted and the last run's error. A cron check, so an alert
 * lost to a crash between the drop and the page is sent by the next tick; the notification's
 * dedup key (`poison:event:<id>`, `poison:wake:<id>`) is what marks it sent, for good (not only
 * inside the dedup window). Each tick pages about at most POISON_ALERTS_PER_TICK items.
 */
import { sql } from "drizzle-orm";
import type { PipelineDeps } from "../pipeline/index.ts";
import { combineWrites, defineTickCheck } from "../pipeline/index.ts";
import { notifications } from "../schema/index.ts";
import { notificationStatements } from "./notify-human.ts";

export const POISON_ALERTS_PER_TICK = 10;

interface Poisoned {
  kind: "event" | "wake";
  id: number;
  what: string;
  attempts: number;
  lastError: string | null;
}

/** The tick's poison check: unannounced drops read in the snapshot, announced in the write batch. */
export const announcePoisonDrops = defineTickCheck({
  name: "notifyPoisonDrops",
  reads(deps: PipelineDeps, agentId: string) {
    const unannounced = (kind: string) =>
      sql`not exists (select 1 from ${notifications} n where n.agent_id = ${agentId} and n.dedup_key = 'poison:' || ${kind} || ':' || x.id)`;
    const lastError = (consumed: ReturnType<typeof sql>) =>
      sql`(select r.error from runs r where r.agent_id = ${agentId} and r.status in ('failed', 'crashed') and ${consumed}
           order by r.run_id desc limit 1)`;
    return {
      poisoned: deps.db.all<Poisoned>(sql`
        select 'event' as kind, x.id, x.source as what, x.attempts,
          ${lastError(sql`exists (select 1 from json_each(r.triggers) j where json_extract(j.value, '$.id') = x.id)`)} as lastError
        from events x where x.agent_id = ${agentId} and x.status = 'dropped' and x.drop_reason = 'poison' and ${unannounced("event")}
        union all
        select 'wake' as kind, x.id, x.reason as what, x.attempts,
          ${lastError(sql`exists (select 1 from json_each(r.wakes_consumed) j where j.value = x.id)`)} as lastError
        from wakes x where x.agent_id = ${agentId} and x.status = 'dropped' and x.drop_reason = 'poison' and ${unannounced("wake")}
        order by 2 limit ${POISON_ALERTS_PER_TICK}`),
    };
  },
  decide(deps, agentId, rows) {
    const alerts = combineWrites(
      rows.poisoned.map((p) =>
        notificationStatements(deps, {
          agentId,
          runId: null,
          title: `Dropped a ${p.kind} that keeps failing (#${p.id})`,
          body: `${p.kind === "event" ? `Event #${p.id} (${p.what})` : `Wake #${p.id} (${p.what})`} was attempted by ${p.attempts} runs that failed or crashed, so it was dropped as poison and will not be retried. Last error: ${p.lastError ?? "none recorded"}.`,
          severity: "critical",
          dedupKey: `poison:${p.kind}:${p.id}`,
        }),
      ),
    );
    return { statements: alerts.statements, after: async (results) => (await alerts.after(results)).length };
  },
});
