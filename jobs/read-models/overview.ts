/**
 * Read model of the overview and its live regions, for one agent: its state (the same read as
 * GET /api/agents/:agent, pipeline's getAgentState), what compaction last did, the latest runs,
 * pending wakes and notifications, attention, the fleet, the charts, spend and memory, and the
 * first steps a new install still has to take (first-steps.ts).
 */
import { and, desc, eq, isNotNull } from "drizzle-orm";
import type { Deps } from "../deps.ts";
import { runs } from "../../schema/index.ts";
import { getAgentState, listWakes } from "../../pipeline/index.ts";
import { listInstances } from "../../fleet/instances/list-instances.ts";
import { listNotifications } from "../../notify/list-notifications.ts";
import { loadAttention } from "./attention.ts";
import { loadCharts } from "./charts.ts";
import { listRunRows } from "./run-list.ts";
import { loadSpend } from "./spend.ts";
import { loadBalance } from "./balance.ts";
import { listMemory } from "../../agent/memory.ts";
import { loadFirstSteps } from "./first-steps.ts";

export const RECENT_RUNS = 5;
export const RECENT_NOTIFICATIONS = 5;

export type AgentState = NonNullable<Awaited<ReturnType<typeof getAgentState>>>;

export interface LastCompaction {
  runId: number;
  record: unknown;
}

export class UnknownAgentError extends Error {
  readonly status = 404;
  constructor(agentId: string) {
    super(`unknown agent: ${agentId}`);
    this.name = "UnknownAgentError";
  }
}

export async function loadAgentState(deps: Parameters<typeof getAgentState>[0], agentId: string): Promise<AgentState> {
  const state = await getAgentState(deps, agentId);
  if (!state) throw new UnknownAgentError(agentId);
  return state;
}

/** The latest run that recorded a compaction, with that record. */
export async function lastCompaction(deps: Pick<Deps, "db">, agentId: string): Promise<LastCompaction | null> {
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

export type OverviewData = Awaited<ReturnType<typeof loadOverview>>;

/** Takes the whole Deps because attention reads the agent's own LLM breaker (jobs/with-agent.ts). */
export async function loadOverview(deps: Deps, agentId: string) {
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
  const balance = await loadBalance(deps, agentId);
  const firstSteps = await loadFirstSteps(deps, agentId);
  return {
    state,
    compaction,
    runs: recentRuns,
    wakes,
    notifications,
    attention,
    instances,
    charts,
    spend,
    balance,
    memory,
    firstSteps,
    now: deps.clock.now(),
  };
}
