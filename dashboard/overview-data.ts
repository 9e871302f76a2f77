/** Reads what the overview and its live regions show, for one agent. */
import { and, desc, eq, isNotNull } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { runs } from "../schema/index.ts";
import { getAgentState, listRuns } from "../triggers/agent-state.ts";
import { listWakes } from "../triggers/wakes.ts";
import { listNotifications } from "../notify/list-notifications.ts";
import { readHealth } from "../agent/watchdog/watchdog.ts";
import type { AgentState, LastCompaction } from "./agent-state-panel.tsx";
import type { OverviewData } from "./overview.tsx";

export const RECENT_RUNS = 5;

export class UnknownAgentError extends Error {
  readonly status = 404;
  constructor(agentId: string) {
    super(`unknown agent: ${agentId}`);
    this.name = "UnknownAgentError";
  }
}

export async function loadAgentState(deps: Deps, agentId: string): Promise<AgentState> {
  const state = await getAgentState(deps, agentId);
  if (!state) throw new UnknownAgentError(agentId);
  return state;
}

/** The latest run that recorded a compaction, with that record. */
export async function lastCompaction(deps: Deps, agentId: string): Promise<LastCompaction | null> {
  const [row] = await deps.db
    .select({ runId: runs.runId, record: runs.compaction })
    .from(runs)
    .where(and(eq(runs.agentId, agentId), isNotNull(runs.compaction)))
    .orderBy(desc(runs.runId))
    .limit(1);
  return row ? { runId: row.runId, record: row.record } : null;
}

/** Busy = a run is in progress, scheduled, or events wait for one: the live script polls faster. */
export const isBusy = (state: AgentState) => state.running || state.nextRunAt !== null || state.pendingEvents > 0;

export async function loadOverview(deps: Deps, agentId: string): Promise<OverviewData> {
  const state = await loadAgentState(deps, agentId);
  const [compaction, recentRuns, wakes, notifications, health] = await Promise.all([
    lastCompaction(deps, agentId),
    listRuns(deps, agentId, RECENT_RUNS),
    listWakes(deps, agentId, "pending", 10),
    listNotifications(deps, agentId, 5),
    readHealth(deps, agentId),
  ]);
  return { state, compaction, runs: recentRuns, wakes, notifications, health, now: deps.clock.now() };
}
