/**
 * The flood bound on an instance's own reports (issue #37 item 8e): at most
 * REPORTS_STORED_PER_MINUTE (a setting, default 60) are stored per instance per minute. The
 * batch that stores a report counts it on the instance's row (`reportsInMinute`, instance-state-statements.ts); that count is
 * read (one primary-key read) only once this process has seen more than LOCAL_QUIET reports of the
 * instance this minute, so a heartbeat costs no extra round trip (on Workers each isolate lets
 * LOCAL_QUIET through unread), and not again that minute once it said the bound is reached. Past
 * it a report of an instance already stored only updates its row (the newest state wins), in the
 * next group commit with the other ingests: a flood's reports share their fsyncs.
 */
import { and, eq, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instances } from "../../schema/index.ts";
import { bind, preparedPerDb } from "../../db/prepared.ts";
import { commitIngest } from "../../pipeline/index.ts";
import { reportMinute, type StateChange } from "./instance-state.ts";

/** Below this many reports of one instance a minute in this process, no extra read. */
const LOCAL_QUIET = 10;
/** Bound of seenHere: past it, the map starts over (a few more reads, never more rows). */
const SEEN_HERE_MAX = 10_000;

/** Reports this process saw per instance in the current minute, and whether the bound was reached. */
const seenHere = new Map<string, { minute: number; n: number; capped: boolean }>();

/**
 * Whether this report is past the bound: counted here, and past LOCAL_QUIET the instance's stored
 * count is read until it says the bound is reached (then no more reads this minute).
 */
export async function pastFloodBound(deps: FleetDeps, agentId: string, instanceId: string, now: number): Promise<boolean> {
  const key = `${agentId}\u0000${instanceId}`;
  const minute = reportMinute(now);
  const seen = seenHere.get(key);
  const current = seen && seen.minute === minute ? { ...seen, n: seen.n + 1 } : { minute, n: 1, capped: false };
  if (seenHere.size >= SEEN_HERE_MAX && !seen) seenHere.clear();
  seenHere.set(key, current);
  if (current.capped) return true;
  if (current.n <= LOCAL_QUIET) return false;
  const [row] = await floodStatements(deps.db).count.all({ agentId, instanceId });
  current.capped = row?.minute === minute && row.n >= deps.config.reportsStoredPerMinute;
  return current.capped;
}

/** Past the bound: the newest state (and utilisation) goes on the instance's row only; false when no row. */
export async function keepNewestState(deps: FleetDeps, change: StateChange, at: number, now: number, gpuUtil: number | undefined) {
  const { update } = await commitIngest(deps, {
    update: bind(floodStatements(deps.db).keepNewest, {
      agentId: change.agentId,
      instanceId: change.instanceId,
      state: change.state,
      message: change.message ?? null,
      at,
      now,
      gpuUtil: gpuUtil ?? null,
    }),
  });
  return update.length > 0;
}

const p = (name: string) => sql.placeholder(name);

const floodStatements = preparedPerDb((db) => {
  const thisInstance = and(eq(instances.agentId, p("agentId")), eq(instances.id, p("instanceId")));
  const newer = sql`${p("at")} >= ${instances.stateAt}`;
  return {
    count: db.select({ minute: instances.reportsMinute, n: instances.reportsInMinute }).from(instances).where(thisInstance).prepare(),
    keepNewest: db
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
      .where(thisInstance)
      .returning({ id: instances.id })
      .prepare(),
  };
});
