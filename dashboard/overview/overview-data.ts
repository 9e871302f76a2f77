/** Reads what the overview and its live regions show, for one agent. */
import { and, desc, eq, isNotNull } from "drizzle-orm";
import type { Deps } from "../../jobs/deps.ts";
import { runs } from "../../schema/index.ts";
import { getAgentState } from "../../pipeline/index.ts";
import { listInstances } from "../../fleet/instances/list-instances.ts";
import { listWakes } from "../../pipeline/index.ts";
import { listNotifications } from "../../notify/list-notifications.ts";
import type { AgentState, LastCompaction } from "./agent-state-panel.tsx";
import { loadAttention } from "./attention.ts";
import type { OverviewData } from "./overview.tsx";
import { loadCharts } from "./overview-charts.tsx";
import { listRunRows } from "../runs/run-rows.ts";
import { loadSpend } from "./spend-data.ts";
import { listMemory } from "../../agent/memory.ts";

export const RECENT_RUNS = 5;
export const RECENT_NOTIFICATIONS = 5;

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
  const [compaction, recentRuns, wakes, notifications, attention, instances, charts, spend, memory] = await Promise.all([
    lastCompaction(deps, agentId),
    listRunRows(deps, agentId, RECENT_RUNS),
    listWakes(deps, agentId, "pending", 10),
    listNotifications(deps, agentId, RECENT_NOTIFICATIONS),
    loadAttention(deps, agentId),
    listInstances(deps, agentId),
    loadCharts(deps, agentId),
    loadSpend(deps, agentId),
    listMemory(deps, agentId),
  ]);
  return { state, compaction, runs: recentRuns, wakes, notifications, attention, instances, charts, spend, memory, now: deps.clock.now() };
}
