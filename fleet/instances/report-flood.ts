/**
 * The flood bound on an instance's own reports (issue #37 item 8e): at most
 * REPORTS_STORED_PER_MINUTE (a setting, default 60) are stored per instance per minute. The batch
 * that stores a report counts it on the instance's row (`reportsInMinute`,
 * instance-state-statements.ts) and answers the count; once a count reaches the bound, this
 * process stores no more reports of that instance that minute. No extra read: a heartbeat's round
 * trips stay as they were. Each process (each Worker isolate) learns it from its own batches, so
 * concurrent reports and other isolates let a few more through, never a flood. Past the bound a
 * report of an instance already stored only updates its row (the newest state wins), in the next
 * group commit with the other ingests: a flood's reports share their fsyncs.
 */
import { and, eq, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instances } from "../../schema/index.ts";
import { bind, preparedPerDb } from "../../db/prepared.ts";
import { commitIngest } from "../../pipeline/index.ts";
import type { InstanceState } from "../providers/provider.ts";

/** The minute a report is counted in (instances.reportsMinute): minutes since the epoch. */
export const reportMinute = (now: number) => Math.floor(now / 60_000);

/**
 * Per database handle, the instances that reached the bound (by agent and instance) and the
 * minute they reached it in: what this process's batches counted on that database.
 */
const cappedIn = new WeakMap<object, Map<string, number>>();
/** Bound of cappedIn: past it, the map starts over (a few more reports stored, never a flood). */
const CAPPED_MAX = 10_000;

const keyOf = (agentId: string, instanceId: string) => `${agentId}\u0000${instanceId}`;

/** Whether the instance already stored its bound this minute (as this process's batches counted). */
export function pastFloodBound(deps: FleetDeps, agentId: string, instanceId: string, now: number): boolean {
  return cappedIn.get(deps.db)?.get(keyOf(agentId, instanceId)) === reportMinute(now);
}

/** What a storing batch counted for the instance: at the bound, no more reports are stored that minute. */
export function noteStoredReports(deps: FleetDeps, agentId: string, instanceId: string, minute: number, stored: number): void {
  if (stored < deps.config.reportsStoredPerMinute) return;
  let capped = cappedIn.get(deps.db);
  if (!capped) cappedIn.set(deps.db, (capped = new Map()));
  if (capped.size >= CAPPED_MAX) capped.clear();
  capped.set(keyOf(agentId, instanceId), minute);
}

/** A report past the bound, as it updates the instance's row. */
export interface CappedState {
  agentId: string;
  instanceId: string;
  state: InstanceState;
  message: string | null;
  at: number;
  now: number;
  gpuUtil: number | null;
}

/** Past the bound: the newest state (and utilisation) goes on the instance's row only; false when no row. */
export async function keepNewestState(deps: FleetDeps, report: CappedState): Promise<boolean> {
  const { update } = await commitIngest(deps, { update: bind(keepNewest(deps.db), { ...report }) });
  return update.length > 0;
}

const p = (name: string) => sql.placeholder(name);

const keepNewest = preparedPerDb((db) => {
  const newer = sql`${p("at")} >= ${instances.stateAt}`;
  return db
    .update(instances)
    .set({
      state: sql`case when ${newer} then ${p("state")} else ${instances.state} end`,
      statusMessage: sql`case when ${newer} then coalesce(${p("message")}, ${instances.statusMessage}) else ${instances.statusMessage} end`,
      stateAt: sql`max(${p("at")}, ${instances.stateAt})`,
      lastSeenAt: sql`max(${p("now")}, ${instances.lastSeenAt})`,
      heartbeatFlaggedAt: null,
      gpuUtil: sql`coalesce(${p("gpuUtil")}, ${instances.gpuUtil})`,
      gpuUtilAt: sql`case when ${p("gpuUtil")} is null then ${instances.gpuUtilAt} else ${p("now")} end`,
      updatedAt: sql`${p("now")}`,
    })
    .where(and(eq(instances.agentId, p("agentId")), eq(instances.id, p("instanceId"))))
    .returning({ id: instances.id })
    .prepare();
});
