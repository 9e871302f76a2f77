/**
 * Read model of the runs list as the dashboard shows it: each run (the same rows as
 * GET /api/agents/:agent/runs, pipeline's listRuns) with its one-line outcome.
 */
import type { Deps } from "../deps.ts";
import { listRuns } from "../../pipeline/index.ts";
import { loadRunEffects, outcomeLine } from "./run-outcome.ts";

export type RunView = Awaited<ReturnType<typeof listRuns>>[number];
export type RunRow = RunView & { outcome: string };

export async function withOutcomes(deps: Pick<Deps, "db">, agentId: string, runs: RunView[]): Promise<RunRow[]> {
  const effects = await loadRunEffects(
    deps,
    agentId,
    runs.map((r) => r.runId),
  );
  return runs.map((run) => ({ ...run, outcome: outcomeLine(run, effects.get(run.runId)) }));
}

export async function listRunRows(deps: Parameters<typeof listRuns>[0], agentId: string, limit: number): Promise<RunRow[]> {
  return withOutcomes(deps, agentId, await listRuns(deps, agentId, limit));
}
