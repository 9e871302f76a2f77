/**
 * An operator's replay of a run, from the API or the dashboard: 404 for an unknown run, the
 * replay itself (agent/replay.ts: its one `replays` row), then the activity row naming the
 * operator, the run and the model.
 */
import type { Deps } from "./deps.ts";
import { replayRun, type ReplayResult } from "../agent/replay.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { getRun } from "../pipeline/index.ts";
import { RequestError } from "./errors.ts";

export async function replayAsOperator(deps: Deps, who: Principal, agentId: string, runId: number, model: string | undefined): Promise<ReplayResult> {
  if (!(await getRun(deps, agentId, runId))) throw new RequestError(404, `unknown run: ${runId}`);
  const result = await replayRun(deps, agentId, runId, { model, operator: who.name });
  await recordActivity(deps.db, who, { action: "replay", agentId, subject: `run ${runId} against ${result.model}`, at: deps.clock.now() });
  return result;
}
