/**
 * Handlers of /api/agents/:agent/blocks: the actions a human's rejection blocks for the agent
 * and the rules policy, and lifting one (DELETE), after which the agent may ask again.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listBlocks, presentBlock } from "../../fleet/actions/action-blocks.ts";
import { liftBlockAsOperator } from "../../jobs/lift-block.ts";

type Ctx = Context<AppEnv>;

export async function getBlocks(c: Ctx, agentId: string, activeOnly: boolean, limit: number) {
  const deps = c.get("deps");
  const rows = await listBlocks(deps, agentId, activeOnly, limit);
  return c.json({ blocks: rows.map((b) => presentBlock(b, deps.clock.now())) });
}

export async function deleteBlock(c: Ctx, agentId: string, blockId: number) {
  const deps = c.get("deps");
  const block = await liftBlockAsOperator(deps, c.get("operator"), agentId, blockId);
  return c.json(presentBlock(block, deps.clock.now()));
}
