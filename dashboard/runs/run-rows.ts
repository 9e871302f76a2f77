/** The runs list as the dashboard shows it: each run with its one-line outcome. */
import type { Deps } from "../../jobs/deps.ts";
import { listRuns } from "../../pipeline/index.ts";
import { loadRunEffects, outcomeLine } from "./run-outcome.ts";

export type RunView = Awaited<ReturnType<typeof listRuns>>[number];
export type RunRow = RunView & { outcome: string };

export async function withOutcomes(deps: Deps, agentId: string, runs: RunView[]): Promise<RunRow[]> {
  const effects = await loadRunEffects(deps, agentId, runs.map((r) => r.runId));
  return runs.map((run) => ({ ...run, outcome: outcomeLine(run, effects.get(run.runId)) }));
}

export async function listRunRows(deps: Deps, agentId: string, limit: number): Promise<RunRow[]> {
  return withOutcomes(deps, agentId, await listRuns(deps, agentId, limit));
}
