/**
 * An operator's replay of a run, from the API or the dashboard: 404 for an unknown run, then the
 * replay itself (agent/llm/replay.ts). Its one `replays` row names the operator, so nothing else is
 * written, not even an activity row: the replay's record is its audit.
 */
import type { Deps } from "./deps.ts";
import { replayRun, type ReplayResult } from "../agent/llm/replay.ts";
import type { Principal } from "../auth/roles.ts";
import { getRun } from "../pipeline/index.ts";
import { RequestError } from "./errors.ts";

export async function replayAsOperator(
  deps: Deps,
  who: Principal,
  agentId: string,
  runId: number,
  model: string | undefined,
): Promise<ReplayResult> {
  if (!(await getRun(deps, agentId, runId))) throw new RequestError(404, `unknown run: ${runId}`);
  return replayRun(deps, agentId, runId, { model, operator: who.name });
}
