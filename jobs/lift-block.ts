/**
 * An operator lifting a rejection's block (the API's DELETE /api/agents/:agent/blocks/:id and the
 * instance page's Lift form): the block names who lifted it (`liftedBy`) and the activity log has
 * one `lift_block` row. Lifting an already inactive block changes nothing and logs nothing.
 */
import type { Deps } from "./deps.ts";
import { RequestError } from "./errors.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { liftBlock, type ActionBlock } from "../fleet/actions/action-blocks.ts";

export async function liftBlockAsOperator(deps: Deps, who: Principal, agentId: string, blockId: number): Promise<ActionBlock> {
  const now = deps.clock.now();
  const wasActive = await liftBlock(deps, agentId, blockId, who.name);
  if (!wasActive) throw new RequestError(404, `unknown block: ${blockId}`);
  if (wasActive.liftedBy === who.name && wasActive.liftedAt === now) {
    await recordActivity(deps.db, who, { action: "lift_block", agentId, subject: blockId, at: now });
  }
  return wasActive;
}
