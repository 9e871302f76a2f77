/**
 * Live updates: the regions a page marks `data-live="<part>"` are rendered here by the same
 * components the page used, and returned as HTML strings for the script to swap in. `active`
 * tells the script to poll fast (a run in progress, scheduled, or waiting events).
 */
import type { Child } from "hono/jsx";
import type { Deps } from "../runtime/deps.ts";
import { listRuns } from "../triggers/agent-state.ts";
import { listWakes } from "../triggers/wakes.ts";
import { ContextGauge, StatePanel, type AgentState } from "./agent-state-panel.tsx";
import { ChatThread } from "./chat.tsx";
import { listChatThread } from "./chat-thread.ts";
import { isBusy, lastCompaction, loadAgentState, RECENT_RUNS } from "./overview-data.ts";
import { RunsTimeline } from "./runs-timeline.tsx";
import { WakesList } from "./wakes.tsx";

export const TIMELINE_RUNS = 50;

type PartRenderer = (deps: Deps, agentId: string, state: AgentState, now: number) => Promise<Child>;

const PARTS: Record<string, PartRenderer> = {
  state: async (_deps, _agentId, state) => <StatePanel state={state} />,
  context: async (deps, agentId, state) => <ContextGauge state={state} compaction={await lastCompaction(deps, agentId)} />,
  "recent-runs": async (deps, agentId, _state, now) => <RunsTimeline runs={await listRuns(deps, agentId, RECENT_RUNS)} now={now} />,
  runs: async (deps, agentId, _state, now) => <RunsTimeline runs={await listRuns(deps, agentId, TIMELINE_RUNS)} now={now} />,
  "pending-wakes": async (deps, agentId, _state, now) => (
    <WakesList wakes={await listWakes(deps, agentId, "pending", 10)} now={now} empty="No pending wakes: the agent has not scheduled a check." />
  ),
  chat: async (deps, agentId, _state, now) => <ChatThread entries={await listChatThread(deps, agentId)} now={now} />,
};

export const LIVE_PART_NAMES = Object.keys(PARTS);

export async function renderLiveParts(deps: Deps, agentId: string, names: readonly string[]) {
  const state = await loadAgentState(deps, agentId);
  const now = deps.clock.now();
  const html: Record<string, string> = {};
  for (const name of new Set(names)) {
    const render = PARTS[name];
    if (!render) continue;
    const node = <>{await render(deps, agentId, state, now)}</>;
    html[name] = String(await node.toString());
  }
  return { active: isBusy(state), running: state.running, runCounter: state.runCounter, sessionEpoch: state.sessionEpoch, html };
}
