/**
 * What an approver needs to decide, captured when the approval is asked (issue #24, item 4): the
 * instance's GPU, what it costs per hour in its state (fleet/economics/instance-cost.ts), its state and
 * since when, the provider, and the links to the instance and the approval. Stored on the
 * approval (`context`) so cards, notifications and the approval page show the instance as it was
 * when someone asked, and described in one place as text lines for every notification.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Config } from "../../runtime/config.ts";
import { instances } from "../../schema/index.ts";
import { costPerHour } from "../economics/instance-cost.ts";

export interface ApprovalContext {
  instanceId: string;
  label: string | null;
  gpuName: string | null;
  gpuCount: number | null;
  /** $/h in the state it was in (storage only when stopped); null when the provider never said. */
  pricePerHour: number | null;
  state: string | null;
  /** ms epoch of the state change the instance was in. */
  stateSince: number | null;
  provider: string;
}

/** The instance as fleetwarden last saw it; an instance it never saw gives nulls, not a refusal. */
export async function approvalContext(
  deps: { db: Db; config: Pick<Config, "provider"> },
  agentId: string,
  instanceId: string,
): Promise<ApprovalContext> {
  const [row] = await deps.db
    .select()
    .from(instances)
    .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId)))
    .limit(1);
  return {
    instanceId,
    label: row?.label ?? null,
    gpuName: row?.gpuName ?? null,
    gpuCount: row?.gpuCount ?? null,
    pricePerHour: row ? costPerHour(row) : null,
    state: row?.state ?? null,
    stateSince: row?.stateAt ?? null,
    provider: deps.config.provider,
  };
}

/** "2 h 5 min", "12 min", "40 s": how long the instance had been in its state. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
}

/** One line: "GPU 2× RTX 4090 · $0.80/h · exited for 12 min · vast". */
export function describeContext(context: ApprovalContext | null, now: number): string {
  if (!context) return "no instance details recorded";
  const gpu = context.gpuName
    ? `GPU ${context.gpuCount && context.gpuCount > 1 ? `${context.gpuCount}× ` : ""}${context.gpuName}`
    : "GPU unknown";
  const price = context.pricePerHour === null ? "$/h unknown" : `$${context.pricePerHour.toFixed(2)}/h`;
  const state = context.state
    ? `${context.state}${context.stateSince !== null ? ` for ${duration(now - context.stateSince)}` : ""}`
    : "state unknown";
  return `${gpu} · ${price} · ${state} · ${context.provider}`;
}

/** Reads a stored context back (a JSON column written by this module), tolerating older rows without one. */
export function storedContext(value: unknown): ApprovalContext | null {
  return value && typeof value === "object" && "instanceId" in value ? (value as ApprovalContext) : null;
}
