/**
 * The `replacements` table's rows (schema/fleet.ts): a proposal's row with what the new instance
 * is made from (spec) and what it must match (basis), the one open row per old instance (the
 * `replacements_open` unique index makes a second proposal the same one), the approval that moves
 * it forward, and how it is shown. Status only moves forward: every write here and in
 * replacement.ts is a compare-and-set on the status it leaves, so a stale caller changes nothing.
 */
import { and, desc, eq, gt, inArray, ne, notInArray, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instances, replacements } from "../../schema/index.ts";
import { iso } from "../../runtime/time.ts";
import type { InstanceSpec, Offer } from "../providers/provider.ts";

export type ReplacementRow = typeof replacements.$inferSelect;

/** Statuses after which a replacement is over (the unique open index leaves these out). */
export const CLOSED = ["done", "failed", "rejected", "expired", "cancelled"] as const;
/** Statuses the tick advances: each a step of fleet/replacement/replacement.ts. */
export const IN_FLIGHT = ["approved", "creating", "waiting", "finishing"] as const;

/** The old instance's figures an offer must match (schema: replacements.basis). */
export interface Basis {
  gpuName: string;
  gpuCount: number;
  diskGb: number | null;
  pricePerHour: number | null;
  machineId: string | null;
  label: string | null;
}

type ReplacementDeps = Pick<FleetDeps, "db" | "clock" | "provider">;

/** The open replacement of an instance, if there is one. */
export async function openReplacement(
  deps: Pick<FleetDeps, "db">,
  agentId: string,
  oldInstanceId: string,
): Promise<ReplacementRow | undefined> {
  const [row] = await deps.db
    .select()
    .from(replacements)
    .where(
      and(eq(replacements.agentId, agentId), eq(replacements.oldInstanceId, oldInstanceId), notInArray(replacements.status, [...CLOSED])),
    );
  return row;
}

/** How long a done replacement still answers for its death on the account (the old instance is history after it). */
const DONE_WINDOW_MS = 24 * 3_600_000;

/**
 * Another agent's replacement of the same instance on the same provider account, open or done in
 * the last day: that death is replaced there, never again here (one death, one rental per account).
 */
export async function replacementInAccount(
  deps: Pick<FleetDeps, "db" | "clock">,
  account: string,
  agentId: string,
  oldInstanceId: string,
): Promise<ReplacementRow | undefined> {
  const same = and(eq(replacements.account, account), eq(replacements.oldInstanceId, oldInstanceId), ne(replacements.agentId, agentId));
  // Open: the condition spelled as the partial index `replacements_account_open` has it, so it is searched by that index.
  const [open] = await deps.db
    .select()
    .from(replacements)
    .where(and(same, sql.raw(`status not in (${CLOSED.map((s) => `'${s}'`).join(", ")})`)))
    .limit(1);
  if (open) return open;
  // Done lately: a scan of the replacements (one row per death), on the proposal path only.
  const [done] = await deps.db
    .select()
    .from(replacements)
    .where(and(same, eq(replacements.status, "done"), gt(replacements.finishedAt, deps.clock.now() - DONE_WINDOW_MS)))
    .orderBy(desc(replacements.id))
    .limit(1);
  return done;
}

/**
 * What the new instance is made from and must match, from the provider's answer (`get`) and,
 * where it lacks something, the stored row; null when the GPU model or count is unknown.
 */
export async function readBasis(
  deps: ReplacementDeps,
  agentId: string,
  instanceId: string,
): Promise<{ basis: Basis; spec: InstanceSpec } | null> {
  const live = await deps.provider.get(instanceId).catch(() => null);
  const [stored] = await deps.db
    .select()
    .from(instances)
    .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId)));
  const gpuName = live?.gpuName ?? stored?.gpuName ?? null;
  const gpuCount = live?.gpuCount ?? stored?.gpuCount ?? null;
  if (!gpuName || !gpuCount) return null;
  const label = live?.label ?? stored?.label ?? null;
  const diskGb = live?.spec?.diskGb ?? live?.diskGb ?? (stored?.spec as InstanceSpec | null)?.diskGb ?? null;
  const basis: Basis = {
    gpuName,
    gpuCount,
    diskGb,
    pricePerHour: live?.pricePerHour ?? stored?.pricePerHour ?? null,
    machineId: live?.machineId ?? stored?.machineId ?? null,
    label,
  };
  // The live answer, else the spec stored when the instance was first seen (a gone instance has no live answer).
  const spec: InstanceSpec = live?.spec ??
    (stored?.spec as InstanceSpec | null) ?? { image: null, templateId: null, env: {}, onstart: null, label, diskGb };
  return { basis, spec };
}

/**
 * The longest marker: Lambda Cloud names an instance with at most 60 characters (dstack's
 * MAX_INSTANCE_NAME_LEN), the tightest of the providers; a longer one would be cut at launch and
 * the new instance never found by it.
 */
export const MAX_MARKER = 60;

/**
 * A marker label unique to one replacement: how its new instance is found after a crash. Its
 * time and random tail make it unique; the old id is cut to fit MAX_MARKER (a Lambda id is 32 hex).
 */
export function newMarker(oldInstanceId: string, now: number): string {
  const tail = `-${now.toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
  return `fw-replace-${oldInstanceId}`.slice(0, MAX_MARKER - tail.length) + tail;
}

/** Inserts the proposal, or answers the open one (one per old instance, one per old instance and account). */
export async function insertProposal(
  deps: ReplacementDeps,
  values: {
    agentId: string;
    oldInstanceId: string;
    reason: string;
    decidedBy: string;
    runId: number | null;
    basis: Basis;
    spec: InstanceSpec;
    /** The provider account (fleet/providers/provider-account.ts); null when unknown. */
    account: string | null;
  },
): Promise<ReplacementRow> {
  const now = deps.clock.now();
  const [row] = await deps.db
    .insert(replacements)
    .values({ ...values, status: "proposed", marker: newMarker(values.oldInstanceId, now), createdAt: now, updatedAt: now })
    .onConflictDoNothing()
    .returning();
  if (row) return row;
  // The one open per instance (this agent's), or per instance and account (another agent's, which won a race).
  const mine = await openReplacement(deps, values.agentId, values.oldInstanceId);
  if (mine || !values.account) return mine!;
  return (await replacementInAccount(deps, values.account, values.agentId, values.oldInstanceId))!;
}

/** Moves a replacement from `from` to `to` with `set`; the row when this call moved it, else undefined. */
export async function advance(
  deps: Pick<FleetDeps, "db" | "clock">,
  id: number,
  from: readonly string[],
  set: Partial<ReplacementRow> & { status: string },
): Promise<ReplacementRow | undefined> {
  const now = deps.clock.now();
  const closing = (CLOSED as readonly string[]).includes(set.status);
  const [row] = await deps.db
    .update(replacements)
    .set({ ...set, updatedAt: now, ...(closing ? { finishedAt: now } : {}) })
    .where(and(eq(replacements.id, id), inArray(replacements.status, [...from])))
    .returning();
  return row;
}

export function presentReplacement(row: ReplacementRow) {
  return {
    id: row.id,
    oldInstanceId: row.oldInstanceId,
    newInstanceId: row.newInstanceId,
    status: row.status,
    reason: row.reason,
    decidedBy: row.decidedBy,
    runId: row.runId,
    approvalId: row.approvalId,
    operator: row.operator,
    basis: row.basis as Basis | null,
    offer: row.offer as Offer | null,
    marker: row.marker,
    error: row.error,
    createAttemptedAt: iso(row.createAttemptedAt),
    deadlineAt: iso(row.deadlineAt),
    createdAt: iso(row.createdAt),
    finishedAt: iso(row.finishedAt),
  };
}

/** Replacements not yet done, failed or closed: proposed, awaiting approval, or under way. */
export const OPEN_STATUSES = ["proposed", "awaiting_approval", ...IN_FLIGHT] as const;

/** The agent's open replacements, newest first (bounded): what the fleet page shows in progress. */
export async function listOpenReplacements(deps: Pick<FleetDeps, "db">, agentId: string, limit = 20) {
  const rows = await deps.db
    .select()
    .from(replacements)
    .where(and(eq(replacements.agentId, agentId), inArray(replacements.status, [...OPEN_STATUSES])))
    .orderBy(desc(replacements.id))
    .limit(limit);
  return rows.map(presentReplacement);
}

/** The agent's replacements, newest first (bounded). */
export async function listReplacements(deps: Pick<FleetDeps, "db">, agentId: string, limit = 50) {
  const rows = await deps.db
    .select()
    .from(replacements)
    .where(eq(replacements.agentId, agentId))
    .orderBy(desc(replacements.id))
    .limit(limit);
  return rows.map(presentReplacement);
}
