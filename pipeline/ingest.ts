/**
 * The one inbox. Every trigger source (chat, manual trigger, instance webhook, reconciliation,
 * heartbeat, approval decision) writes one event row, idempotent on its dedup key, and requests
 * a run in the same database batch. A repeated dedup key stores nothing and requests nothing.
 * The batch goes through the host's group commit when it has one (deps.groupCommit): ingests
 * arriving together share one transaction, each answered once its own rows are committed.
 * If publishing the run's delivery fails, the event is still stored and pending; the cron tick
 * requests a run for it, so nothing is lost.
 */
import { and, eq, sql } from "drizzle-orm";
import type { PipelineDeps } from "./deps.ts";
import type { Statements } from "../db/group-commit.ts";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteInsertValue } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/client.ts";
import { events } from "../schema/index.ts";
import { bind, preparedPerDb } from "../db/prepared.ts";
import { namedBatch, type NamedResults, type NamedStatements } from "../db/named-batch.ts";
import { debounceWindow, publishRunSlot, scheduleIfPending, type Priority } from "./request-run.ts";

export type EventSource =
  | "human"
  | "manual"
  | "webhook"
  | "reconcile"
  | "heartbeat"
  | "approval"
  | "overdue"
  | "vast_notification"
  // Acting resumed after shadow mode (jobs/shadow-handover.ts).
  | "mode";

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

/**
 * Commits an ingest's batch, its statements named and run in the order given: shared with
 * concurrent ingests under group commit, else alone. Answers each statement's result by name.
 */
export async function commitIngest<T extends NamedStatements>(deps: PipelineDeps, statements: T): Promise<NamedResults<T>> {
  const batch = namedBatch(statements);
  const items = batch.items as unknown as Statements;
  return batch.results(await (deps.groupCommit ? deps.groupCommit.submit(items) : deps.db.batch(items)));
}

/** An inbox row as written: what the event is, and (when judged on the way in) its status. */
export type InboxRow = Omit<SQLiteInsertValue<typeof events>, "id" | "runId" | "attempts" | "consumedAt">;

/**
 * The inbox's one insert: an events row, ignored when its (agent, dedup key) is stored already,
 * which is what makes every ingest idempotent. Pending by default; a writer that judges the event
 * on the way in (an instance state change that is no news) gives `status` and `dropReason` as SQL
 * its batch evaluates. Values may be placeholders: callers prepare it once per database.
 */
export function insertEvent(db: Db, row: InboxRow) {
  return db.insert(events).values(row).onConflictDoNothing();
}

/** The ingest statements, prepared once per database (the hot path of chat and triggers). */
const ingestPrepared = preparedPerDb((db) => {
  const agentId = sql.placeholder("agentId");
  const dedupKey = sql.placeholder("dedupKey");
  return {
    insert: insertEvent(db, {
      agentId,
      source: sql.placeholder("source"),
      priority: sql.placeholder("priority"),
      dedupKey,
      payload: sql.placeholder("payload"),
      createdAt: sql.placeholder("now"),
    }).prepare(),
    // Right after the insert: changes() says whether it stored the event (1) or found it stored (0).
    stored: db
      .select({ id: events.id, inserted: sql<number>`changes()` })
      .from(events)
      .where(and(eq(events.agentId, agentId), eq(events.dedupKey, dedupKey)))
      .prepare(),
  };
});

/** The row `stored` reads: the event's id, and whether this batch's insert stored it (1) or not. */
export type StoredEvent = { id: number; inserted: number };
/** The row the run request returns when it moved the scheduled run (none when absorbed). */
export type MovedRun = { slot: number; runAt: number | null };

/**
 * The ingest batch's statements, by name, in order: the event insert (ignored for a repeated
 * dedup key), the stored row with whether the insert stored it (read `stored` as StoredEvent),
 * and the run request while the event is pending (request-run.ts's debounce; `scheduleRun` as
 * MovedRun). Callers may add statements of their own after them that key off the dedup key.
 */
export function ingestStatements(deps: PipelineDeps, input: IncomingEvent) {
  const now = deps.clock.now();
  const prepared = ingestPrepared(deps.db);
  const values = {
    ...input,
    now,
    target: now + debounceWindow(deps.config, input.priority),
  };
  return {
    insertEvent: bind(prepared.insert, values),
    stored: bind(prepared.stored, values),
    scheduleRun: scheduleIfPending(deps, values),
  };
}

/**
 * Stores the event and requests its run in one batch. `afterInsert` (an operator's activity row)
 * runs after the event insert and its stored row's read, in the same transaction: there
 * `changes()` and `last_insert_rowid()` still name that insert (a read changes neither), so the
 * statement can write only when the event was stored (never for a repeated dedup key) and refer
 * to its id.
 */
export async function ingestEvent(deps: PipelineDeps, input: IncomingEvent, afterInsert?: BatchItem<"sqlite">): Promise<Ingested> {
  const { insertEvent, stored, scheduleRun } = ingestStatements(deps, input);
  const results = await commitIngest(deps, { insertEvent, stored, ...(afterInsert ? { afterInsert } : {}), scheduleRun });
  const moved: MovedRun | undefined = results.scheduleRun[0];
  await publishAfterIngest(deps, input.agentId, moved);
  const row: StoredEvent = results.stored[0];
  return { eventId: row.id, duplicate: row.inserted === 0 };
}

/** Publishes the moved slot's delivery; a failure is logged, and the cron tick repairs it. */
export async function publishAfterIngest(deps: PipelineDeps, agentId: string, moved: MovedRun | undefined): Promise<void> {
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
