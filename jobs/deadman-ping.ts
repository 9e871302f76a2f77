/**
 * Who watches the watcher (DEADMAN_URL): a scheduled cron tick that completes pings a third-party
 * check (healthchecks.io, Cronitor), so the humans hear from that service when fleetwarden stops
 * ticking (a cron trigger that stopped silently, a host that died). The healthchecks.io / Cronitor
 * convention: GET `<url>` on success, GET `<url>/fail` while any agent's watchdog has an open
 * condition (or the conditions cannot be read; an archived agent's are not counted), so the check also turns red while the loop is
 * unwell. Bound: one ping per tick (jobs/scheduled-tick.ts calls it once, at the end), 5 s timeout,
 * no retry; a failed ping is logged and never fails the tick.
 */
import { databaseRefusal } from "../notify/database-refusal.ts";
import { and, eq, isNull } from "drizzle-orm";
import type { Deps } from "./deps.ts";
import { agents, watchdogConditions } from "../schema/index.ts";

export const DEADMAN_TIMEOUT_MS = 5_000;

export type DeadmanPing = { pinged: "ok" | "fail"; status: number | null };

/** `<url>/fail` (a trailing slash of the check's URL is not doubled; a query is kept). */
export function failUrl(url: string): string {
  const u = new URL(url);
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/fail`;
  return u.toString();
}

/** One ping, or null when DEADMAN_URL is unset. Never throws. */
export async function pingDeadman(deps: Pick<Deps, "db" | "config" | "log">): Promise<DeadmanPing | null> {
  const url = deps.config.deadmanUrl;
  if (!url) return null;
  // The database refusing writes for its plan's quota or size fails the check too (notify/database-refusal.ts).
  const failing = databaseRefusal(deps) !== null || (await watchdogHasCondition(deps));
  const pinged = failing ? "fail" : "ok";
  try {
    const res = await fetch(failing ? failUrl(url) : url, { method: "GET", signal: AbortSignal.timeout(DEADMAN_TIMEOUT_MS) });
    await res.body?.cancel();
    if (!res.ok) deps.log.error("the dead-man ping was refused", { status: res.status, pinged });
    return { pinged, status: res.status };
  } catch (err) {
    // The URL carries the check's token: it is not logged.
    deps.log.error("the dead-man ping failed", { pinged, error: String(err) });
    return { pinged, status: null };
  }
}

/** Whether any active (not archived) agent has an open watchdog condition; a failed read counts as one. */
async function watchdogHasCondition(deps: Pick<Deps, "db" | "log">): Promise<boolean> {
  try {
    const open = await deps.db
      .select({ id: watchdogConditions.id })
      .from(watchdogConditions)
      .innerJoin(agents, eq(agents.id, watchdogConditions.agentId))
      .where(and(isNull(watchdogConditions.clearedAt), isNull(agents.archivedAt)))
      .limit(1);
    return open.length > 0;
  } catch (err) {
    deps.log.error("the dead-man ping could not read the watchdog's conditions", { error: String(err) });
    return true;
  }
}
