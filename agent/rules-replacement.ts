/**
 * The rules policy's replacement rule: every instance of the agent that has been offline,
 * unknown or gone for REPLACE_AFTER_S, or whose start failed for lack of its GPU, is proposed for
 * replacement (fleet/replacement-proposal.ts, the same rule the LLM's tool uses). Bounded as the
 * proposal is: one open replacement per instance, one request per death, a human's "no" sticks.
 */
import { and, eq, gt, inArray, isNull, or } from "drizzle-orm";
import type { FleetDeps } from "../fleet/deps.ts";
import { instances } from "../schema/index.ts";
import { DEAD_STATES, proposeReplacement } from "../fleet/replacement-proposal.ts";
import type { RunFence } from "../pipeline/index.ts";

/** Candidates per run, at most (a fleet that lost a whole region asks in pieces). */
const MAX_PER_RUN = 10;

export async function replaceByRules(deps: FleetDeps, context: { agentId: string; runId: number; fence: RunFence | null }, decisions: string[]): Promise<boolean> {
  if (deps.config.replace.afterMs === 0) return false;
  const now = deps.clock.now();
  const candidates = await deps.db
    .select({ id: instances.id })
    .from(instances)
    .where(and(eq(instances.agentId, context.agentId), isNull(instances.replacedBy), or(inArray(instances.state, [...DEAD_STATES, "exited"]), gt(instances.goneAt, now - 24 * 3_600_000))))
    .orderBy(instances.id)
    .limit(MAX_PER_RUN);
  let mutated = false;
  for (const { id } of candidates) {
    const proposal = await proposeReplacement(deps, { agentId: context.agentId, runId: context.runId, decidedBy: "rules", fence: context.fence }, id, "rules policy");
    if (proposal.status !== "proposed" && proposal.status !== "unsupported") continue;
    if (proposal.status === "proposed" && !proposal.result.repeated) mutated = true;
    decisions.push(`replacement of ${id}: ${proposal.detail}`);
  }
  return mutated;
}
