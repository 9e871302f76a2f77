/**
 * Lease expiry (issue 35, item 2, the expiry side): a rental's lease that ran out unrenewed is told
 * at once to its owner (named, with the operator's Slack user when set) through the agent's
 * channels, and LEASE_GRACE_S later its instance is stopped through executeAction as `rules` (the
 * action table decides: an approval list or shadow mode holds as for any stop; a destroy is never
 * asked for here) and the lease ends with endReason `expired` (`gone` when the instance is already
 * gone). A lease whose owner no longer exists (no operators row, or revoked; the ADMIN_TOKEN holder
 * always exists) is not this check's: its instance is an orphan (fleet/leases/orphans.ts).
 *
 * Reads the `leases` table directly (the lease store, fleet/leases/leases.ts, is the MCP side's).
 *
 * What bounds it:
 * - per tick: at most LEASE_EXPIRIES_PER_TICK (20) leases, soonest ended first, and only those with
 *   work left (not yet told, or past their grace), so a told lease in its grace does not hold a slot;
 * - the first notice: the once-mark `lease-ended:<instance>:<endsAt>` (an extension gives a new
 *   endsAt, so a lease that runs out again is told again);
 * - the stop: the action key `lease-expiry:<instance>:<endsAt>` (one stop per lease episode, whatever
 *   its outcome), and the lease ends with it, so the next tick does not select it again;
 * - the stop's notice: a stop that happened is told by the money-move notice (its reason names the
 *   lease; fleet/actions/money-told.ts), so it is told once; a stop that did not happen (awaiting
 *   approval, shadow proposal, failed) is told under the once-mark `lease-stopped:<instance>:<endsAt>`.
 */
import { and, asc, eq, isNotNull, isNull, lte, not, or, sql } from "drizzle-orm";
import { BOOTSTRAP_ADMIN } from "../../auth/roles.ts";
import type { FleetDeps } from "../deps.ts";
import { instances, leases, operators } from "../../schema/index.ts";
import { defineTickCheck, writesNothing, type TickWrites } from "../../pipeline/index.ts";
import { iso } from "../../runtime/time.ts";
import { executeAction } from "../actions/actions.ts";
import { onceKey, onceKeySql, onceMarked, onceNoticeStatements } from "../once-notices.ts";
import { tellOnce } from "../tell-once.ts";
import { ratePerHour } from "../economics/spend.ts";

/** The per-tick bound on leases handled (told or stopped). */
export const LEASE_EXPIRIES_PER_TICK = 20;

export const leaseEndedKey = (instanceId: string, endsAt: number) => onceKey("lease-ended", instanceId, endsAt);
export const leaseStoppedKey = (instanceId: string, endsAt: number) => onceKey("lease-stopped", instanceId, endsAt);
export const leaseExpiryActionKey = (instanceId: string, endsAt: number) => `lease-expiry:${instanceId}:${endsAt}`;

export interface LeaseExpiryReport {
  told: string[];
  stopped: { instanceId: string; status: string; error?: string }[];
  gone: string[];
}

export const checkLeaseExpiry = defineTickCheck({
  name: "checkLeaseExpiry",
  reads(deps: FleetDeps, agentId: string, now: number) {
    const told = onceMarked(agentId, onceKeySql("lease-ended", sql`${leases.instanceId}`, sql`${leases.endsAt}`));
    return {
      due: deps.db
        .select({
          instanceId: leases.instanceId,
          owner: leases.owner,
          client: leases.client,
          purpose: leases.purpose,
          endsAt: leases.endsAt,
          slackUserId: operators.slackUserId,
          state: instances.state,
          pricePerHour: instances.pricePerHour,
          storagePerHour: instances.storagePerHour,
          goneAt: instances.goneAt,
          told: sql<number>`${told}`,
        })
        .from(leases)
        // The owner must still exist: an ownerless lease's instance is an orphan (orphans.ts).
        .leftJoin(operators, and(eq(operators.name, leases.owner), isNull(operators.revokedAt)))
        .leftJoin(instances, and(eq(instances.agentId, leases.agentId), eq(instances.id, leases.instanceId)))
        .where(
          and(
            openLeaseOf(agentId),
            lte(leases.endsAt, now),
            ownerExists(),
            or(not(told), lte(leases.endsAt, now - deps.config.leaseGraceMs)),
          ),
        )
        .orderBy(asc(leases.endsAt))
        .limit(LEASE_EXPIRIES_PER_TICK),
    };
  },
  decide(deps, agentId, rows, tick) {
    const report: LeaseExpiryReport = { told: [], stopped: [], gone: [] };
    if (rows.due.length === 0) return writesNothing(report);
    const grace = deps.config.leaseGraceMs;
    const notices: TickWrites<unknown>[] = [];
    const ends: TickWrites<unknown>["statements"] = [];
    const toStop: (typeof rows.due)[number][] = [];
    for (const lease of rows.due) {
      const endLease = (reason: string) =>
        deps.db
          .update(leases)
          .set({ endedAt: tick.now, endReason: reason, updatedAt: tick.now })
          .where(
            and(
              eq(leases.agentId, agentId),
              eq(leases.instanceId, lease.instanceId),
              eq(leases.endsAt, lease.endsAt),
              isNull(leases.endedAt),
            ),
          );
      if (lease.goneAt !== null) {
        ends.push(endLease("gone"));
        report.gone.push(lease.instanceId);
        continue;
      }
      const cost = ratePerHour({ state: lease.state ?? "unknown", pricePerHour: lease.pricePerHour, storagePerHour: lease.storagePerHour });
      if (!lease.told) {
        notices.push(
          onceNoticeStatements(deps, agentId, {
            key: leaseEndedKey(lease.instanceId, lease.endsAt),
            title: `Lease on instance ${lease.instanceId} ran out`,
            body: `${whose(lease)} lease on instance ${lease.instanceId} (${lease.purpose}) ran out at ${iso(lease.endsAt)} unrenewed; the instance costs $${cost.toFixed(2)}/h. It will be stopped at ${iso(lease.endsAt + grace)} (LEASE_GRACE_S) unless the lease is extended (extend_lease) or the instance released.`,
            severity: "warning",
            instanceId: lease.instanceId,
          }),
        );
        report.told.push(lease.instanceId);
      }
      if (lease.endsAt + grace <= tick.now) toStop.push(lease);
    }
    const statements = [...ends, ...notices.flatMap((n) => n.statements)];
    return {
      statements,
      async after(results) {
        let at = ends.length;
        for (const notice of notices) {
          await notice.after(results.slice(at, at + notice.statements.length));
          at += notice.statements.length;
        }
        for (const lease of toStop) report.stopped.push(await stopExpired(deps, agentId, lease, tick.now));
        if (report.told.length + report.stopped.length + report.gone.length > 0)
          deps.log.info("lease expiry", { agentId, told: report.told.length, stopped: report.stopped.length, gone: report.gone.length });
        return report;
      },
    };
  },
});

/**
 * The agent's open leases, read through the partial index `leases_open` (open leases only, by
 * endsAt): the unary `+` keeps SQLite off the primary key's agent_id prefix, which would read every
 * lease the agent ever had (a lease keeps its row when it ends).
 */
export function openLeaseOf(agentId: string) {
  return and(sql`+${leases.agentId} = ${agentId}`, isNull(leases.endedAt))!;
}

/** The lease's owner exists: an operator not revoked, or the ADMIN_TOKEN holder (who has no operators row). */
export function ownerExists() {
  return or(isNotNull(operators.id), eq(leases.owner, BOOTSTRAP_ADMIN.name))!;
}

interface DueLease {
  instanceId: string;
  owner: string;
  client: string | null;
  purpose: string;
  endsAt: number;
  slackUserId: string | null;
  state: string | null;
  pricePerHour: number | null;
  storagePerHour: number | null;
}

/**
 * "ana's (Slack user U0ANA) through claude-code": the owner named, with her Slack user when she has
 * one. Operators have no channels of their own, so the owner is told in the agent's channels; a
 * Slack `<@U…>` mention is not written, as the Slack channel escapes `<` and `>` in every text.
 */
function whose(lease: Pick<DueLease, "owner" | "client" | "slackUserId">): string {
  const mention = lease.slackUserId ? ` (Slack user ${lease.slackUserId})` : "";
  const client = lease.client ? ` through ${lease.client}` : "";
  return `${lease.owner}'s${mention}${client}`;
}

/** The stop after the grace, through the action table; the lease ends whatever the outcome, and that is told once. */
async function stopExpired(deps: FleetDeps, agentId: string, lease: DueLease, now: number) {
  const grace = deps.config.leaseGraceMs;
  const cost = ratePerHour({ state: lease.state ?? "unknown", pricePerHour: lease.pricePerHour, storagePerHour: lease.storagePerHour });
  const result = await executeAction(deps, {
    agentId,
    runId: null,
    instanceId: lease.instanceId,
    kind: "stop",
    decidedBy: "rules",
    idempotencyKey: leaseExpiryActionKey(lease.instanceId, lease.endsAt),
    reason: `the lease (${lease.owner}, ${lease.purpose}) ran out at ${iso(lease.endsAt)} and was not extended within LEASE_GRACE_S (${grace / 1000} s)`,
  });
  await deps.db
    .update(leases)
    .set({ endedAt: now, endReason: "expired", updatedAt: now })
    .where(
      and(eq(leases.agentId, agentId), eq(leases.instanceId, lease.instanceId), eq(leases.endsAt, lease.endsAt), isNull(leases.endedAt)),
    );
  // A stop that happened is a money move, told once by its own notice with the reason above and
  // what it saves per hour; only a stop that did not happen is told here.
  if (result.status !== "succeeded") {
    const outcome =
      result.status === "awaiting_approval"
        ? `needs a human's approval to stop (request ${result.approvalId}); it costs $${cost.toFixed(2)}/h until then`
        : result.status === "proposed"
          ? `was not stopped: shadow mode recorded the stop as a proposal; it still costs $${cost.toFixed(2)}/h`
          : `could not be stopped (${result.status}${result.error ? `: ${result.error}` : ""}); it still costs $${cost.toFixed(2)}/h`;
    await tellOnce(deps, agentId, {
      key: leaseStoppedKey(lease.instanceId, lease.endsAt),
      title: `Instance ${lease.instanceId}: lease expired`,
      body: `${whose(lease)} lease on instance ${lease.instanceId} (${lease.purpose}) ran out at ${iso(lease.endsAt)} and was not extended within its grace of ${grace / 1000} s, so instance ${lease.instanceId} ${outcome}. The lease is ended.`,
      severity: ["awaiting_approval", "proposed"].includes(result.status) ? "warning" : "critical",
      instanceId: lease.instanceId,
    });
  }
  return { instanceId: lease.instanceId, status: result.status, ...(result.error ? { error: result.error } : {}) };
}
