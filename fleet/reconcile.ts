/**
 * Reconciliation (a cron check): at most once per RECONCILE_INTERVAL_S per agent, the provider's
 * list is compared with fleetwarden's view, so the agent hears about changes that sent no
 * webhook. A new instance or a changed state becomes an instance event (priority 1) through
 * recordInstanceState; an unchanged one only has its details refreshed (no event); an instance
 * the provider no longer lists is marked gone (never deleted) with one event. If the list fails,
 * nothing is recorded and the error is thrown: a failed list is never an empty fleet.
 */
import { and, eq, isNull, lte, sql } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { agents, instanceEvents, instances } from "../schema/index.ts";
import { ingestEvent } from "../triggers/ingest.ts";
import type { TickCheck } from "../triggers/cron-tick.ts";
import { recordInstanceState } from "./instance-state.ts";
import type { FleetInstance } from "./provider.ts";

type StoredInstance = typeof instances.$inferSelect;

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

  for (const seen of listed) {
    const row = stored.get(seen.id);
    if (!row || row.state !== seen.state || row.goneAt !== null) {
      await recordInstanceState(deps, {
        agentId,
        instanceId: seen.id,
        state: seen.state,
        at: now,
        message: seen.statusMessage,
        source: "reconcile",
        dedupKey: `reconcile:${seen.id}:${row?.state ?? "new"}->${seen.state}:${now}`,
        details: details(seen),
      });
      report.changed.push(seen.id);
    } else if (detailsDiffer(row, seen)) {
      await db
        .update(instances)
        .set({ ...details(seen), statusMessage: seen.statusMessage ?? row.statusMessage, updatedAt: now })
        .where(and(eq(instances.agentId, agentId), eq(instances.id, seen.id)));
      report.refreshed.push(seen.id);
    }
  }

  const listedIds = new Set(listed.map((i) => i.id));
  for (const row of storedRows) {
    if (row.goneAt !== null || listedIds.has(row.id)) continue;
    await markGone(deps, row, now);
    report.gone.push(row.id);
  }
  return report;
}

/**
 * The provider no longer lists the instance: keep the row, mark it gone, tell the agent once.
 * The event goes in first under a key stable for this disappearance (the stored state's time),
 * so a crash before the row is marked repeats nothing on the next turn: the event is a duplicate
 * and the mark and history row follow.
 */
async function markGone(deps: Deps, row: StoredInstance, now: number): Promise<void> {
  const { db } = deps;
  const { eventId } = await ingestEvent(deps, {
    agentId: row.agentId,
    source: "reconcile",
    priority: 1,
    dedupKey: `reconcile:${row.id}:gone:${row.stateAt}`,
    payload: { instanceId: row.id, gone: true, lastState: row.state, at: new Date(now).toISOString() },
  });
  await db.batch([
    db
      .update(instances)
      .set({ goneAt: now, updatedAt: now })
      .where(and(eq(instances.agentId, row.agentId), eq(instances.id, row.id), isNull(instances.goneAt))),
    db.run(sql`insert into ${instanceEvents} (agent_id, instance_id, from_state, to_state, source, message, at, event_id, created_at)
      select ${row.agentId}, ${row.id}, ${row.state}, 'gone', 'reconcile', 'no longer listed by the provider', ${now}, ${eventId}, ${now}
      where not exists (select 1 from ${instanceEvents} where agent_id = ${row.agentId} and event_id = ${eventId})`),
  ]);
}

/** The cron check. A provider failure propagates so the tick logs it against this check. */
export const reconcileInstances: TickCheck = async function reconcileInstances(deps, agentId) {
  await reconcileFleet(deps, agentId);
};
