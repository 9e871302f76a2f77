/**
 * The rules policy's replacement rule: every instance of the agent that has been offline,
 * unknown or gone for REPLACE_AFTER_S, or whose start failed for lack of its GPU, is proposed for
 * replacement (fleet/replacement/replacement-proposal.ts, the same rule the LLM's tool uses). Bounded as the
 * proposal is: one open replacement per instance, one request per death, a human's "no" sticks;
 * and per run, at most MAX_PER_RUN new requests from at most MAX_EXAMINED candidates (instances
 * with a replacement open are not candidates).
 */
import { and, eq, gt, inArray, isNull, notExists, notInArray, or } from "drizzle-orm";
import type { FleetDeps } from "../../fleet/deps.ts";
import { instances, replacements } from "../../schema/index.ts";
import { DEAD_STATES, proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { CLOSED } from "../../fleet/replacement/replacement-rows.ts";
import type { RunFence } from "../../pipeline/index.ts";

/** New proposals per run, at most (a fleet that lost a whole region asks in pieces). */
const MAX_PER_RUN = 10;
/**
 * Candidates looked at per run, at most. More than MAX_PER_RUN: exited instances that are only
 * exited, and deaths already decided (a "no" that sticks), are candidates too but ask nothing, so
 * a limit of MAX_PER_RUN on candidates let ten of them hide every later dead instance for good.
 */
const MAX_EXAMINED = 100;

export async function replaceByRules(
  deps: FleetDeps,
  context: { agentId: string; runId: number; fence: RunFence | null },
  decisions: string[],
): Promise<boolean> {
  if (deps.config.replace.afterMs === 0) return false;
  const now = deps.clock.now();
  const open = deps.db
    .select({ id: replacements.id })
    .from(replacements)
    .where(
      and(
        eq(replacements.agentId, context.agentId),
        eq(replacements.oldInstanceId, instances.id),
        notInArray(replacements.status, [...CLOSED]),
      ),
    );
  const candidates = await deps.db
    .select({ id: instances.id })
    .from(instances)
    .where(
      and(
        eq(instances.agentId, context.agentId),
        isNull(instances.replacedBy),
        or(inArray(instances.state, [...DEAD_STATES, "exited"]), gt(instances.goneAt, now - 24 * 3_600_000)),
        notExists(open),
      ),
    )
    .orderBy(instances.id)
    .limit(MAX_EXAMINED);
  let mutated = false;
  let asked = 0;
  for (const { id } of candidates) {
    if (asked >= MAX_PER_RUN) break;
    const proposal = await proposeReplacement(
      deps,
      { agentId: context.agentId, runId: context.runId, decidedBy: "rules", fence: context.fence },
      id,
      "rules policy",
    );
    if (proposal.status !== "proposed" && proposal.status !== "unsupported") continue;
    if (proposal.status === "proposed" && !proposal.result.repeated) {
      mutated = true;
      asked++;
    }
    decisions.push(`replacement of ${id}: ${proposal.detail}`);
  }
  return mutated;
}
