/**
 * The lease store (issue #35, item 2): one row per instance rented through fleetwarden, saying who
 * rented it (the operator and the MCP client acting for them), why, and until when. Opened by the
 * rent action once the provider created the instance, extended by its owner in one call, ended
 * when released, expired past its grace (fleet/leases/lease-expiry.ts) or found gone. A lease that
 * ended keeps its row (the owner's budget and the audit read it). No loop lives here: every call
 * is one statement on the (agent, instance) primary key or the (owner, agent) index.
 */
import { and, asc, eq, isNull, type SQL } from "drizzle-orm";
import { leases } from "../../schema/index.ts";
import type { FleetDeps } from "../deps.ts";

export type Lease = typeof leases.$inferSelect;
export type LeaseEndReason = "released" | "expired" | "gone";

type LeaseDeps = Pick<FleetDeps, "db" | "clock">;

export interface OpenLease {
  agentId: string;
  instanceId: string;
  /** operators.name */
  owner: string;
  /** The MCP client's clientInfo name, or "api" / "dashboard". */
  client: string | null;
  purpose: string;
  /** ms epoch */
  endsAt: number;
}

/**
 * Records the lease of a freshly rented instance. An instance id the provider reuses (a row whose
 * lease ended) is leased anew: the old row is replaced, its history stays in the action records.
 */
export async function openLease(deps: LeaseDeps, lease: OpenLease): Promise<Lease> {
  const now = deps.clock.now();
  const values = { ...lease, endedAt: null, endReason: null, createdAt: now, updatedAt: now };
  const [row] = await deps.db
    .insert(leases)
    .values(values)
    .onConflictDoUpdate({ target: [leases.agentId, leases.instanceId], set: values })
    .returning();
  return row!;
}

/** Moves an open lease's end to `endsAt` (ms epoch); null when there is no open lease. */
export async function extendLease(deps: LeaseDeps, agentId: string, instanceId: string, endsAt: number): Promise<Lease | null> {
  const [row] = await deps.db
    .update(leases)
    .set({ endsAt, updatedAt: deps.clock.now() })
    .where(and(eq(leases.agentId, agentId), eq(leases.instanceId, instanceId), isNull(leases.endedAt)))
    .returning();
  return row ?? null;
}

/** Ends an open lease; null when it was not open (already ended, or never leased). */
export async function endLease(deps: LeaseDeps, agentId: string, instanceId: string, reason: LeaseEndReason): Promise<Lease | null> {
  const now = deps.clock.now();
  const [row] = await deps.db
    .update(leases)
    .set({ endedAt: now, endReason: reason, updatedAt: now })
    .where(and(eq(leases.agentId, agentId), eq(leases.instanceId, instanceId), isNull(leases.endedAt)))
    .returning();
  return row ?? null;
}

/** The lease of one instance (open or ended), or null. */
export async function leaseOf(deps: Pick<FleetDeps, "db">, agentId: string, instanceId: string): Promise<Lease | null> {
  const [row] = await deps.db
    .select()
    .from(leases)
    .where(and(eq(leases.agentId, agentId), eq(leases.instanceId, instanceId)));
  return row ?? null;
}

/** The agent's leases, soonest end first; `owner` narrows to one operator's, `open` to the unended. */
export async function leasesOf(
  deps: Pick<FleetDeps, "db">,
  agentId: string,
  filter: { owner?: string; open?: boolean } = {},
  limit = 500,
): Promise<Lease[]> {
  const where: SQL[] = [eq(leases.agentId, agentId)];
  if (filter.owner !== undefined) where.push(eq(leases.owner, filter.owner));
  if (filter.open) where.push(isNull(leases.endedAt));
  return deps.db
    .select()
    .from(leases)
    .where(and(...where))
    .orderBy(asc(leases.endsAt))
    .limit(limit);
}
