/**
 * The fleet-fraction breaker (Cluster API's maxUnhealthy): when more than MAX_UNHEALTHY_PCT of an
 * agent's instances are dead at once, the provider rather than the fleet is the likely fault, and
 * restarting, replacing or destroying them one by one would spend money on the provider's outage
 * (SkyPilot relaunched a healthy job 24 times when its status checks timed out). This module owns
 * the rule: which instances count, when a death is confirmed, and whether a human lifted the hold.
 * The action table reads it as a fact (fleet/actions/decide.ts "fleet breaker open"); the watchdog
 * (agent/watchdog) keeps the episode as its `fleet_breaker_open` condition, tells a human once,
 * and shows it on the health route. No table of its own: the episode is the watchdog row, a lift is
 * a once_notices mark keyed by that row, so the next episode is held again.
 */
import { and, eq, gt, isNull, like, or } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { agents, instances, onceNotices, watchdogConditions } from "../../schema/index.ts";
import { RequestError } from "../../runtime/errors.ts";
import type { ActionKind } from "./action-types.ts";

/** The watchdog condition that records an open breaker (one row per episode). */
export const FLEET_BREAKER_CONDITION = "fleet_breaker_open";
/** What the breaker holds back: automatic remediation, never a human's own action. */
export const REMEDIATION_KINDS: ReadonlySet<ActionKind> = new Set(["start", "reboot", "replace", "destroy"]);
/** A death counts only once it has been seen twice this far apart (one bad listing is no outage). */
export const CONFIRM_MS = 60_000;
/** The window: an instance gone longer than this is history, neither counted nor dead. */
export const BREAKER_WINDOW_MS = 3_600_000;
/** One dead instance is never a provider's outage, whatever share of a small fleet it is. */
export const MIN_DEAD = 2;

const DEAD = new Set(["offline", "unknown"]);

export interface FleetRow {
  id: string;
  state: string;
  stateAt: number;
  lastSeenAt: number;
  goneAt: number | null;
}

/** The agent's instances within the window, and when its provider listing last answered. */
export function fleetHealthReads(deps: Pick<FleetDeps, "db">, agentId: string, now: number) {
  const { db } = deps;
  return {
    instances: db
      .select({
        id: instances.id,
        state: instances.state,
        stateAt: instances.stateAt,
        lastSeenAt: instances.lastSeenAt,
        goneAt: instances.goneAt,
      })
      .from(instances)
      .where(and(eq(instances.agentId, agentId), or(isNull(instances.goneAt), gt(instances.goneAt, now - BREAKER_WINDOW_MS)))),
    listed: db.select({ at: agents.lastReconciledAt }).from(agents).where(eq(agents.id, agentId)),
  };
}

export interface FleetShare {
  counted: number;
  dead: string[];
}

/**
 * The confirmed dead among the counted instances (pure). A death is offline, unknown or gone; it is
 * confirmed when a later observation (the provider listing that still said so, or the instance's
 * own report) came at least CONFIRM_MS after the first.
 */
export function fleetShare(rows: readonly FleetRow[], listedAt: number | null): FleetShare {
  const dead: string[] = [];
  for (const row of rows) {
    const diedAt = row.goneAt ?? (DEAD.has(row.state) ? row.stateAt : null);
    if (diedAt === null) continue;
    const lastLook = Math.max(listedAt ?? 0, row.lastSeenAt);
    if (lastLook - diedAt >= CONFIRM_MS) dead.push(row.id);
  }
  return { counted: rows.length, dead: dead.sort() };
}

/** The breaker trips on more than the agent's share (and at least MIN_DEAD deaths). */
export function breakerTrips(config: Pick<FleetDeps["config"], "maxUnhealthyPct">, share: FleetShare): boolean {
  return share.dead.length >= MIN_DEAD && share.dead.length * 100 > config.maxUnhealthyPct * share.counted;
}

export function describeShare(config: Pick<FleetDeps["config"], "maxUnhealthyPct">, share: FleetShare): string {
  const shown = share.dead.slice(0, 10).join(", ") + (share.dead.length > 10 ? ", …" : "");
  return `${share.dead.length} of ${share.counted} instances are offline, unknown or gone (over MAX_UNHEALTHY_PCT ${config.maxUnhealthyPct} %): ${shown}; the provider is the likely fault, so no automatic restart, replacement or destroy runs until the share falls back or a human lifts the hold`;
}

/** What the watchdog's detail adds once a human lifted the episode (the overview reads it to hide its Lift form). */
export const LIFTED_NOTE = "a human lifted the hold: remediation runs";

const liftKey = (conditionId: number) => `fleet-breaker-lifted:${conditionId}`;

/** The open episode's row and whether a human lifted it, for one batch. */
export function breakerEpisodeReads(deps: Pick<FleetDeps, "db">, agentId: string) {
  const { db } = deps;
  return {
    episode: db
      .select({ id: watchdogConditions.id, since: watchdogConditions.since })
      .from(watchdogConditions)
      .where(
        and(
          eq(watchdogConditions.agentId, agentId),
          eq(watchdogConditions.kind, FLEET_BREAKER_CONDITION),
          isNull(watchdogConditions.clearedAt),
        ),
      )
      .limit(1),
    lifts: db
      .select({ key: onceNotices.key })
      .from(onceNotices)
      .where(and(eq(onceNotices.agentId, agentId), like(onceNotices.key, "fleet-breaker-lifted:%"))),
  };
}

/** Whether the episode's hold was lifted by a human (pure, over breakerEpisodeReads' rows). */
export function liftedFrom(episode: readonly { id: number }[], lifts: readonly { key: string }[]): boolean {
  const open = episode[0];
  return open !== undefined && lifts.some((l) => l.key === liftKey(open.id));
}

/**
 * A human lifts the hold of the open episode: remediation runs again although the share is still
 * over, until the share falls back (the episode closes) and a new one trips. Bounded: one lift per
 * episode (the once mark keyed by its row); a second is a 409, as is a lift with none open.
 */
export async function liftFleetBreaker(
  deps: Pick<FleetDeps, "db" | "clock">,
  agentId: string,
): Promise<{ conditionId: number; since: number }> {
  const [open] = await breakerEpisodeReads(deps, agentId).episode;
  if (!open) throw new RequestError(409, "the fleet breaker is not open: there is no hold to lift");
  const marked = await deps.db
    .insert(onceNotices)
    .values({ agentId, key: liftKey(open.id), notificationId: null, at: deps.clock.now() })
    .onConflictDoNothing()
    .returning({ key: onceNotices.key });
  if (marked.length === 0)
    throw new RequestError(409, "the fleet breaker's hold is already lifted for this episode: remediation runs until the share falls back");
  return { conditionId: open.id, since: open.since };
}
