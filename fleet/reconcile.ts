/**
 * Reconciliation (a cron check): at most once per RECONCILE_INTERVAL_S per agent, the provider's
 * list is compared with fleetwarden's view, so the agent hears about changes that sent no
 * webhook. A new instance or a changed state becomes an instance event (priority 1) through
 * recordInstanceState; an unchanged one only has its details refreshed (no event); an instance
 * the provider no longer lists is marked gone (never deleted) with one event. If the list fails,
 * nothing is recorded and the error is thrown: a failed list is never an empty fleet.
 *
 * Round trips follow the provider's pages, not the fleet's size: the differences are written a
 * page (RECONCILE_PAGE instances) at a time, each page's changes sharing one group-committed
 * batch, each change still its own idempotent ingest, with a turn of the event loop between pages
 * so requests are served while a big fleet is reconciled.
 */
import { and, eq, isNull, lte, sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { agents, events, instanceEvents, instances } from "../schema/index.ts";
import { GroupCommit } from "../db/group-commit.ts";
import { yieldToEventLoop } from "../runtime/yield.ts";
import { commitIngest, ingestStatements, publishAfterIngest } from "../triggers/ingest.ts";
import type { TickCheck } from "../triggers/cron-tick.ts";
import { recordInstanceState } from "./instance-state.ts";
import type { FleetInstance } from "./provider.ts";

type StoredInstance = typeof instances.$inferSelect;

/** Instances whose differences share one batch. */
export const RECONCILE_PAGE = 200;

export interface ReconcileReport {
  /** False when the interval had not passed and nothing was asked of the provider. */
  ran: boolean;
  changed: string[];
  refreshed: string[];
  gone: string[];
}

/** Takes this interval's turn, or returns null when another reconcile ran too recently. */
async function claimTurn(deps: Deps, agentId: string, now: number): Promise<{ previous: number | null } | null> {
  const [before] = await deps.db.select({ at: agents.lastReconciledAt }).from(agents).where(eq(agents.id, agentId));
  if (!before) return null;
  const due = now - deps.config.reconcileIntervalMs;
  const claimed = await deps.db
    .update(agents)
    .set({ lastReconciledAt: now })
    .where(
      and(
        eq(agents.id, agentId),
        before.at === null ? isNull(agents.lastReconciledAt) : and(eq(agents.lastReconciledAt, before.at), lte(agents.lastReconciledAt, due)),
      ),
    )
    .returning({ id: agents.id });
  return claimed.length ? { previous: before.at } : null;
}

function details(i: FleetInstance) {
  return {
    label: i.label,
    gpuName: i.gpuName,
    gpuCount: i.gpuCount,
    pricePerHour: i.pricePerHour,
    startedAt: i.startedAt,
  };
}

function detailsDiffer(stored: StoredInstance, seen: FleetInstance): boolean {
  return (
    stored.label !== seen.label ||
    stored.gpuName !== seen.gpuName ||
    stored.gpuCount !== seen.gpuCount ||
    stored.pricePerHour !== seen.pricePerHour ||
    stored.startedAt !== seen.startedAt ||
    (seen.statusMessage !== null && stored.statusMessage !== seen.statusMessage)
  );
}

export async function reconcileFleet(deps: Deps, agentId: string): Promise<ReconcileReport> {
  const { db, clock } = deps;
  const now = clock.now();
  const report: ReconcileReport = { ran: false, changed: [], refreshed: [], gone: [] };
  const turn = await claimTurn(deps, agentId, now);
  if (!turn) return report;

  let listed: FleetInstance[];
  try {
    listed = await deps.provider.list();
  } catch (err) {
    // Give the turn back so the next tick tries again; record nothing about the fleet.
    await db
      .update(agents)
      .set({ lastReconciledAt: turn.previous })
      .where(and(eq(agents.id, agentId), eq(agents.lastReconciledAt, now)));
    deps.log.error("reconcile: provider list failed; nothing recorded", { agentId, provider: deps.provider.kind, error: String(err) });
    throw err;
  }
  report.ran = true;

  const storedRows = await db.select().from(instances).where(eq(instances.agentId, agentId));
  const stored = new Map(storedRows.map((row) => [row.id, row]));
  const listedIds = new Set(listed.map((i) => i.id));
  const writes: (() => Promise<unknown>)[] = [];
  // Writes made through `paged` share a batch with the rest of their page.
  const paged: Deps = { ...deps, groupCommit: new GroupCommit(db, { windowMs: 0, maxRequests: RECONCILE_PAGE }) };

  for (const seen of listed) {
    const row = stored.get(seen.id);
    if (!row || row.state !== seen.state || row.goneAt !== null) {
      writes.push(() =>
        recordInstanceState(paged, {
          agentId,
          instanceId: seen.id,
          state: seen.state,
          at: now,
          message: seen.statusMessage,
          source: "reconcile",
          dedupKey: `reconcile:${seen.id}:${row?.state ?? "new"}->${seen.state}:${now}`,
          details: details(seen),
        }),
      );
      report.changed.push(seen.id);
    } else if (detailsDiffer(row, seen)) {
      writes.push(() =>
        commitIngest(paged, [
          db
            .update(instances)
            .set({ ...details(seen), statusMessage: seen.statusMessage ?? row.statusMessage, updatedAt: now })
            .where(and(eq(instances.agentId, agentId), eq(instances.id, seen.id))),
        ]),
      );
      report.refreshed.push(seen.id);
    }
  }
  for (const row of storedRows) {
    if (row.goneAt !== null || listedIds.has(row.id)) continue;
    writes.push(() => markGone(paged, row, now));
    report.gone.push(row.id);
  }
  for (let start = 0; start < writes.length; start += RECONCILE_PAGE) {
    if (start > 0) await yieldToEventLoop();
    await Promise.all(writes.slice(start, start + RECONCILE_PAGE).map((write) => write()));
  }
  return report;
}

/**
 * The provider no longer lists the instance: keep the row, mark it gone, tell the agent once, in
 * one batch. The event is keyed by this disappearance (the stored state's time) and the history
 * row by that event, so a repeated turn after a crash writes nothing twice.
 */
async function markGone(deps: Deps, row: StoredInstance, now: number): Promise<void> {
  const { db } = deps;
  const dedupKey = `reconcile:${row.id}:gone:${row.stateAt}`;
  const event = ingestStatements(deps, {
    agentId: row.agentId,
    source: "reconcile",
    priority: 1,
    dedupKey,
    payload: { instanceId: row.id, gone: true, lastState: row.state, at: new Date(now).toISOString() },
  });
  const [, , moved] = await commitIngest(deps, [
    ...event,
    db
      .update(instances)
      .set({ goneAt: now, updatedAt: now })
      .where(and(eq(instances.agentId, row.agentId), eq(instances.id, row.id), isNull(instances.goneAt))),
    db.run(sql`insert into ${instanceEvents} (agent_id, instance_id, from_state, to_state, source, message, at, event_id, created_at)
      select ${row.agentId}, ${row.id}, ${row.state}, 'gone', 'reconcile', 'no longer listed by the provider', ${now}, e.id, ${now}
      from ${events} e
      where e.agent_id = ${row.agentId} and e.dedup_key = ${dedupKey}
        and not exists (select 1 from ${instanceEvents} ie where ie.agent_id = ${row.agentId} and ie.event_id = e.id)`),
  ]);
  await publishAfterIngest(deps, row.agentId, moved[0]);
}

/** The cron check. A provider failure propagates so the tick logs it against this check. */
export const reconcileInstances: TickCheck = async function reconcileInstances(deps, agentId) {
  await reconcileFleet(deps, agentId);
};
