/**
 * Reconciliation (a cron check): at most once per RECONCILE_INTERVAL_S per agent, the provider's
 * list is compared with fleetwarden's view, so the agent hears about changes that sent no
 * webhook. A new instance or a changed state becomes an instance event (priority 1) through
 * recordInstanceState; an unchanged one only has its details refreshed (no event); an instance
 * the provider no longer lists is marked gone (never deleted) with one event. If the list fails,
 * nothing is recorded and the error is thrown: a failed list is never an empty fleet.
 *
 * A check of the tick (pipeline/tick-plan.ts): its interval's turn is claimed, and the stored
 * instances read, in the tick's snapshot batch.
 * Round trips follow the provider's pages, not the fleet's size: the differences are written a
 * page (RECONCILE_PAGE instances) at a time, each page's changes sharing one group-committed
 * batch, each change still its own idempotent ingest, with a turn of the event loop between pages
 * so requests are served while a big fleet is reconciled.
 * Telemetry the list carries (utilisation, disk use) is written as a sample for every listed
 * instance (fleet/instances/telemetry.ts) by one more write in the last page's batch (no round trip of its
 * own): one sample per instance per interval, bounded by the interval's turn like the rest.
 * A stop by a higher bid is recorded with `reason: "outbid"` in the event's payload.
 * Webhook-only instances (first seen in a report, schema/fleet.ts): a listing that names one
 * clears the mark (it is the provider's from then on, gone when no longer listed); one the
 * listing does not name is left alone, never marked gone.
 */
import { and, eq, isNull, lte, or, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import type { PipelineDeps } from "../../pipeline/index.ts";
import { agents, events, instanceEvents, instances } from "../../schema/index.ts";
import { GroupCommit } from "../../db/group-commit.ts";
import { yieldToEventLoop } from "../../runtime/yield.ts";
import { commitIngest, ingestStatements, publishAfterIngest } from "../../pipeline/index.ts";
import { defineTickCheck, writesNothing } from "../../pipeline/index.ts";
import { recordInstanceState } from "./instance-state.ts";
import type { FleetInstance } from "../providers/provider.ts";
import { hasTelemetry, telemetryStatements, type TelemetrySource } from "./telemetry.ts";

type StoredInstance = typeof instances.$inferSelect;

/**
 * Instances whose differences share one batch. 500 keeps the first tick over 1,000 instances
 * (every one new) within issue 13's budget of provider pages + 5 round trips (issue 26: at 200 it
 * took 17 against 15); a page still yields to the event loop before the next.
 */
export const RECONCILE_PAGE = 500;

export interface ReconcileReport {
  /** False when the interval had not passed and nothing was asked of the provider. */
  ran: boolean;
  changed: string[];
  refreshed: string[];
  gone: string[];
}

/**
 * The snapshot's statements: the previous turn's time, this interval's turn taken when it is due
 * (one transaction with the read, so two ticks never both take it), and the stored instances,
 * read only when the turn was taken.
 */
function turnStatements(deps: FleetDeps, agentId: string, now: number) {
  const { db } = deps;
  const due = now - deps.config.reconcileIntervalMs;
  return {
    before: db.select({ at: agents.lastReconciledAt }).from(agents).where(eq(agents.id, agentId)),
    claim: db
      .update(agents)
      .set({ lastReconciledAt: now })
      .where(and(eq(agents.id, agentId), or(isNull(agents.lastReconciledAt), lte(agents.lastReconciledAt, due))))
      .returning({ id: agents.id }),
    stored: db
      .select()
      .from(instances)
      .where(
        and(
          eq(instances.agentId, agentId),
          sql`exists (select 1 from ${agents} where ${agents.id} = ${agentId} and ${agents.lastReconciledAt} = ${now})`,
        ),
      ),
  };
}

function details(i: FleetInstance) {
  return {
    label: i.label,
    gpuName: i.gpuName,
    gpuCount: i.gpuCount,
    pricePerHour: i.pricePerHour,
    startedAt: i.startedAt,
    storagePerHour: i.storagePerHour ?? null,
    endsAt: i.endsAt ?? null,
    interruptible: i.interruptible ?? null,
  };
}

/**
 * The listed instances' telemetry as one write (fleet/instances/telemetry.ts: one statement pair for the
 * whole list); null when the provider reported none.
 */
function telemetryWrite(deps: FleetDeps, agentId: string, listed: FleetInstance[], now: number): (() => Promise<unknown>) | null {
  const readings = listed
    .map((i) => ({ instanceId: i.id, at: now, gpuUtil: i.gpuUtil, diskUsedPct: i.diskUsedPct }))
    .filter((r) => hasTelemetry(r));
  if (!readings.length) return null;
  const source: TelemetrySource = deps.provider.kind;
  return () => commitIngest(deps, telemetryStatements(deps, agentId, source, readings, null));
}

function detailsDiffer(stored: StoredInstance, seen: FleetInstance): boolean {
  return (
    stored.label !== seen.label ||
    stored.gpuName !== seen.gpuName ||
    stored.gpuCount !== seen.gpuCount ||
    stored.pricePerHour !== seen.pricePerHour ||
    stored.startedAt !== seen.startedAt ||
    stored.storagePerHour !== (seen.storagePerHour ?? null) ||
    stored.endsAt !== (seen.endsAt ?? null) ||
    stored.interruptible !== (seen.interruptible ?? null) ||
    stored.webhookOnly ||
    (seen.statusMessage !== null && stored.statusMessage !== seen.statusMessage)
  );
}

/** Reconciles from the snapshot's rows: the provider's pages, then a batch per page of changes. */
async function reconcileFromSnapshot(
  deps: FleetDeps,
  agentId: string,
  rows: { before: { at: number | null }[]; claim: { id: string }[]; stored: StoredInstance[] },
  now: number,
): Promise<ReconcileReport> {
  const { db } = deps;
  const report: ReconcileReport = { ran: false, changed: [], refreshed: [], gone: [] };
  if (!rows.claim.length) return report;
  const turn = { previous: rows.before[0]?.at ?? null };

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

  const storedRows = rows.stored;
  const stored = new Map(storedRows.map((row) => [row.id, row]));
  const listedIds = new Set(listed.map((i) => i.id));
  const writes: (() => Promise<unknown>)[] = [];
  // Writes made through `paged` share a batch with the rest of their page (its changes, telemetry and specs).
  const paged: FleetDeps = { ...deps, groupCommit: new GroupCommit(db, { windowMs: 0, maxRequests: RECONCILE_PAGE + 2 }) };

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
          reason: seen.stopReason ?? null,
        }),
      );
      report.changed.push(seen.id);
      continue;
    }
    if (!detailsDiffer(row, seen)) continue;
    writes.push(() =>
      commitIngest(paged, {
        refreshDetails: db
          .update(instances)
          .set({ ...details(seen), statusMessage: seen.statusMessage ?? row.statusMessage, webhookOnly: false, updatedAt: now })
          .where(and(eq(instances.agentId, agentId), eq(instances.id, seen.id))),
      }),
    );
    report.refreshed.push(seen.id);
  }
  for (const row of storedRows) {
    // A webhook-only instance was never the provider's to list: its absence is no disappearance.
    if (row.goneAt !== null || row.webhookOnly || listedIds.has(row.id)) continue;
    writes.push(() => markGone(paged, row, now));
    report.gone.push(row.id);
  }
  const specs = specWrites(deps, agentId, listed, stored);
  const specWrite = specs.length ? () => commitIngest(paged, Object.fromEntries(specs.map((st, i) => [`spec${i}`, st]))) : null;
  // The samples ride in the last page's batch, after its changes (they name the rows those create).
  const telemetry = telemetryWrite(paged, agentId, listed, now);
  // The specs too, after the page's changes: a row first seen in this turn exists by then.
  const pages = Math.ceil(writes.length / RECONCILE_PAGE) || (telemetry || specWrite ? 1 : 0);
  for (let page = 0; page < pages; page++) {
    if (page > 0) await yieldToEventLoop();
    const slice = writes.slice(page * RECONCILE_PAGE, (page + 1) * RECONCILE_PAGE);
    if (telemetry && page === pages - 1) slice.push(telemetry);
    if (specWrite && page === pages - 1) slice.push(specWrite);
    await Promise.all(slice.map((write) => write()));
  }
  return report;
}

/**
 * The spec of each listed instance that has one (an image, a template or Lambda's launch) and whose stored spec
 * differs: kept on the row so a replacement can make it again once the provider no longer answers
 * for it (fleet/replacement/replacement-rows.ts readBasis). A listing without a spec never erases
 * a stored one. Bounded: one statement per instance whose spec changed.
 */
function specWrites(deps: FleetDeps, agentId: string, listed: FleetInstance[], stored: Map<string, StoredInstance>) {
  return listed.flatMap((seen) => {
    const spec = seen.spec;
    if (!spec || !(spec.image || spec.templateId || spec.launch)) return [];
    if (JSON.stringify(stored.get(seen.id)?.spec ?? null) === JSON.stringify(spec)) return [];
    return [
      deps.db
        .update(instances)
        .set({ spec })
        .where(and(eq(instances.agentId, agentId), eq(instances.id, seen.id))),
    ];
  });
}

/**
 * The provider no longer lists the instance: keep the row, mark it gone, tell the agent once, in
 * one batch. The event is keyed by this disappearance (the stored state's time) and the history
 * row by that event, so a repeated turn after a crash writes nothing twice.
 */
async function markGone(deps: PipelineDeps, row: StoredInstance, now: number): Promise<void> {
  const { db } = deps;
  const dedupKey = `reconcile:${row.id}:gone:${row.stateAt}`;
  const event = ingestStatements(deps, {
    agentId: row.agentId,
    source: "reconcile",
    priority: 1,
    dedupKey,
    payload: { instanceId: row.id, gone: true, lastState: row.state, at: new Date(now).toISOString() },
  });
  const results = await commitIngest(deps, {
    ...event,
    markGone: db
      .update(instances)
      .set({ goneAt: now, idleSince: null, updatedAt: now })
      .where(and(eq(instances.agentId, row.agentId), eq(instances.id, row.id), isNull(instances.goneAt))),
    appendHistory:
      db.run(sql`insert into ${instanceEvents} (agent_id, instance_id, from_state, to_state, source, message, at, event_id, created_at)
      select ${row.agentId}, ${row.id}, ${row.state}, 'gone', 'reconcile', 'no longer listed by the provider', ${now}, e.id, ${now}
      from ${events} e
      where e.agent_id = ${row.agentId} and e.dedup_key = ${dedupKey}
        and not exists (select 1 from ${instanceEvents} ie where ie.agent_id = ${row.agentId} and ie.event_id = e.id)`),
  });
  await publishAfterIngest(deps, row.agentId, results.scheduleRun[0]);
}

/**
 * The tick's reconciliation check. Its writes are its own page batches (made while deciding);
 * the instances it recorded are left to the next tick by the checks after it.
 */
export const reconcileInstances = defineTickCheck({
  name: "reconcileInstances",
  reads: turnStatements,
  async decide(deps, agentId, rows, tick) {
    const report = await reconcileFromSnapshot(deps, agentId, rows, tick.now);
    for (const id of [...report.changed, ...report.gone]) tick.reconciled.add(id);
    return writesNothing(report);
  },
});
