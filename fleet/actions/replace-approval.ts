/**
 * What executing a `replace` does: its open replacement (fleet/replacement/, proposed before the
 * request was made) becomes `approved`, and nothing else. The tick's replacement check
 * (fleet/replacement/replacement-check.ts) is the replacement's only stepper: it searches offers
 * and makes the one create. Written here against the table, not through fleet/replacement/, which
 * sits above the action table and acts through it.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { replacements } from "../../schema/index.ts";
import { unsupported } from "../providers/provider.ts";
import type { ActionRequest } from "./action-types.ts";

/** Statuses a replacement waits in for its approval, and those it is under way in. */
const ASKING = ["proposed", "awaiting_approval"];
const UNDER_WAY = ["approved", "creating", "waiting", "finishing"];

/** Marks the instance's open replacement approved; throws why not (recorded as the action's failure). */
export async function markReplacementApproved(deps: Pick<FleetDeps, "db" | "clock" | "provider">, request: ActionRequest): Promise<void> {
  if (!deps.provider.capabilities.has("create")) throw unsupported(deps.provider.kind, "create");
  const { db } = deps;
  const now = deps.clock.now();
  const mine = and(eq(replacements.agentId, request.agentId), eq(replacements.oldInstanceId, request.instanceId));
  const [moved] = await db
    .update(replacements)
    .set({
      status: "approved",
      ...(request.approvalId !== undefined ? { approvalId: request.approvalId } : {}),
      operator: sql`coalesce(${request.operator ?? null}, ${replacements.operator})`,
      updatedAt: now,
    })
    .where(and(mine, inArray(replacements.status, ASKING)))
    .returning({ id: replacements.id });
  if (moved) return;
  const [open] = await db
    .select({ id: replacements.id })
    .from(replacements)
    .where(and(mine, inArray(replacements.status, UNDER_WAY)));
  if (open) return;
  if (request.approvalId !== undefined) {
    // The approval of a replacement closed meanwhile (cancelled by an operator): nothing is rented.
    const [closed] = await db
      .select()
      .from(replacements)
      .where(and(eq(replacements.agentId, request.agentId), eq(replacements.approvalId, request.approvalId)));
    if (closed) throw new Error(`replacement ${closed.id} of ${request.instanceId} is ${closed.status}`);
  }
  throw new Error(`no replacement of ${request.instanceId} is open to approve`);
}
