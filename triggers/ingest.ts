/**
 * The one inbox. Every trigger source (chat, manual trigger, instance webhook, reconciliation,
 * heartbeat, approval decision) writes one event row, idempotent on its dedup key, and requests
 * a run in the same database batch. A repeated dedup key stores nothing and requests nothing.
 * If publishing the run's delivery fails, the event is still stored and pending; the cron tick
 * requests a run for it, so nothing is lost.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { events } from "../schema/index.ts";
import { debounceWindow, publishRunSlot, scheduleRunStatement, type Priority } from "./request-run.ts";

export type EventSource = "human" | "manual" | "webhook" | "reconcile" | "heartbeat" | "approval" | "overdue";

export interface IncomingEvent {
  agentId: string;
  source: EventSource;
  priority: Priority;
  dedupKey: string;
  payload: Record<string, unknown>;
}

export interface Ingested {
  eventId: number;
  duplicate: boolean;
}

/** Statement: the event is stored and still waiting for a run. */
export function eventIsPending(agentId: string, dedupKey: string) {
  return sql`exists (select 1 from ${events} where ${events.agentId} = ${agentId} and ${events.dedupKey} = ${dedupKey} and ${events.status} = 'pending')`;
}

export async function ingestEvent(deps: Deps, input: IncomingEvent): Promise<Ingested> {
  const { db, clock } = deps;
  const now = clock.now();
  const target = now + debounceWindow(deps.config, input.priority);
  const [inserted, existing, moved] = await db.batch([
    db
      .insert(events)
      .values({ ...input, createdAt: now })
      .onConflictDoNothing()
      .returning({ id: events.id }),
    db
      .select({ id: events.id })
      .from(events)
      .where(and(eq(events.agentId, input.agentId), eq(events.dedupKey, input.dedupKey))),
    scheduleRunStatement(deps, input.agentId, target, eventIsPending(input.agentId, input.dedupKey)),
  ]);
  await publishAfterIngest(deps, input.agentId, moved[0]);
  return { eventId: existing[0]!.id, duplicate: inserted.length === 0 };
}

/** Publishes the moved slot's delivery; a failure is logged, and the cron tick repairs it. */
export async function publishAfterIngest(
  deps: Deps,
  agentId: string,
  moved: { slot: number; runAt: number | null } | undefined,
): Promise<void> {
  if (!moved) return;
  try {
    await publishRunSlot(deps, agentId, moved.slot, moved.runAt ?? deps.clock.now());
  } catch (err) {
    deps.log.error("publishing a run delivery failed; the cron tick will request it again", {
      agentId,
      slot: moved.slot,
      error: String(err),
    });
  }
}
