/**
 * Live updates: the regions a page marks `data-live="<part>"` are rendered here by the same
 * components the page used, and returned as HTML strings for the script to swap in. The script
 * sends the page's own path and query (`page`), so a region that depends on them (the Fleet
 * table's sort and filter, an instance's or a run's page) renders the same view. `active` tells
 * the script to poll fast (a run in progress, scheduled, or waiting events); `at` is the server
 * time of this answer, shown as "updated at".
 */
import type { Child } from "hono/jsx";
import { listApprovals } from "../fleet/actions/approvals.ts";
import { listInstances } from "../fleet/instances/list-instances.ts";
import { listNotifications } from "../notify/list-notifications.ts";
import type { Deps } from "../jobs/deps.ts";
import { listWakes } from "../pipeline/index.ts";
import { ContextGauge, StatePanel } from "./overview/agent-state-panel.tsx";
import { ApprovalsList } from "./approvals/approvals.tsx";
import { loadAttention, type Attention } from "../jobs/read-models/attention.ts";
import { AttentionStrip } from "./overview/attention-strip.tsx";
import { ChatThread } from "./chat/chat.tsx";
import { loadChatThread } from "../jobs/read-models/chat-thread.ts";
import { FleetSummary, FleetTable } from "./fleet/fleet.tsx";
import { arrangeFleet, fleetHref, parseFleetQuery } from "./fleet/fleet-query.ts";
import { InstanceDetail } from "./fleet/instance-page.tsx";
import { getInstanceRecord } from "../jobs/read-models/instance-record.ts";
import { NavCount } from "./shell/layout.tsx";
import { NotificationsList } from "./approvals/notifications.tsx";
import { OverviewCharts } from "./overview/overview-charts.tsx";
import { loadCharts } from "../jobs/read-models/charts.ts";
import {
  isBusy,
  lastCompaction,
  loadAgentState,
  RECENT_NOTIFICATIONS,
  RECENT_RUNS,
  type AgentState,
} from "../jobs/read-models/overview.ts";
import { RunDetail } from "./runs/run-detail.tsx";
import { getRunRecord } from "../jobs/read-models/run-record.ts";
import { listRunRows } from "../jobs/read-models/run-list.ts";
import { RunsTimeline } from "./runs/runs-timeline.tsx";
import { WakesList } from "./runs/wakes.tsx";
import { SpendPanel } from "./overview/spend-panel.tsx";
import type { Viewer } from "./shell/can.ts";
import { loadSpend } from "../jobs/read-models/spend.ts";
import { loadBalance } from "../jobs/read-models/balance.ts";

export const TIMELINE_RUNS = 50;
export const APPROVALS_SHOWN = 100;
export const NOTIFICATIONS_SHOWN = 100;

export interface LiveView {
  deps: Deps;
  agentId: string;
  state: AgentState;
  now: number;
  csrf: string;
  /** Who asks: the regions render only the controls they may use. */
  viewer: Viewer;
  /** The page the regions are on: its path and query. */
  page: URL;
  attention: () => Promise<Attention>;
}

type PartRenderer = (v: LiveView) => Promise<Child>;

const pathId = (page: URL, prefix: string) => {
  const match = page.pathname.match(new RegExp(`^/${prefix}/([^/]+)$`));
  return match ? decodeURIComponent(match[1]!) : null;
};

const PARTS: Record<string, PartRenderer> = {
  state: async (v) => <StatePanel state={v.state} />,
  context: async (v) => <ContextGauge state={v.state} compaction={await lastCompaction(v.deps, v.agentId)} />,
  attention: async (v) => <AttentionStrip attention={await v.attention()} />,
  "badge-attention": async (v) => <NavCount count={(await v.attention()).count} what="need attention" />,
  "badge-approvals": async (v) => <NavCount count={(await v.attention()).approvals.length} what="waiting" />,
  charts: async (v) => <OverviewCharts data={await loadCharts(v.deps, v.agentId)} />,
  spend: async (v) => <SpendPanel spend={await loadSpend(v.deps, v.agentId)} balance={await loadBalance(v.deps, v.agentId)} />,
  "fleet-summary": async (v) => <FleetSummary instances={await listInstances(v.deps, v.agentId)} />,
  "fleet-table": async (v) => {
    const query = parseFleetQuery(Object.fromEntries(v.page.searchParams));
    const shown = arrangeFleet(await listInstances(v.deps, v.agentId), query);
    return (
      <FleetTable
        instances={shown}
        query={query}
        now={v.now}
        csrf={v.csrf}
        simulated={v.deps.provider.kind === "simulator" && v.viewer.can("simulateFailure")}
        back={fleetHref(query)}
        economics={v.deps.config.economics}
      />
    );
  },
  instance: async (v) => {
    const id = pathId(v.page, "fleet");
    const record = id === null ? null : await getInstanceRecord(v.deps, v.agentId, id);
    return record ? (
      <InstanceDetail
        record={record}
        now={v.now}
        csrf={v.csrf}
        simulated={v.deps.provider.kind === "simulator"}
        approvalRequired={v.deps.config.approvalRequired}
        viewer={v.viewer}
        capabilities={v.deps.provider.capabilities}
      />
    ) : (
      <p>This instance is no longer known.</p>
    );
  },
  "recent-runs": async (v) => <RunsTimeline runs={await listRunRows(v.deps, v.agentId, RECENT_RUNS)} now={v.now} caption="Latest runs" />,
  runs: async (v) => <RunsTimeline runs={await listRunRows(v.deps, v.agentId, TIMELINE_RUNS)} now={v.now} />,
  run: async (v) => {
    const runId = Number(pathId(v.page, "runs"));
    const record = Number.isSafeInteger(runId) && runId > 0 ? await getRunRecord(v.deps, v.agentId, runId) : null;
    return record ? <RunDetail record={record} now={v.now} /> : <p>This run is no longer known.</p>;
  },
  "pending-wakes": async (v) => (
    <WakesList
      wakes={await listWakes(v.deps, v.agentId, "pending", 10)}
      now={v.now}
      empty="No pending wakes: the agent has not scheduled a check."
    />
  ),
  approvals: async (v) => (
    <ApprovalsList
      approvals={await listApprovals(v.deps, v.agentId, undefined, APPROVALS_SHOWN)}
      csrf={v.csrf}
      now={v.now}
      role={v.viewer.role}
    />
  ),
  notifications: async (v) => (
    <NotificationsList notifications={await listNotifications(v.deps, v.agentId, NOTIFICATIONS_SHOWN)} now={v.now} />
  ),
  "recent-notifications": async (v) => (
    <NotificationsList notifications={await listNotifications(v.deps, v.agentId, RECENT_NOTIFICATIONS)} now={v.now} />
  ),
  chat: async (v) => <ChatThread thread={await loadChatThread(v.deps, v.agentId)} now={v.now} viewer={v.viewer.name} />,
};

export const LIVE_PART_NAMES = Object.keys(PARTS);

/** Memoises one read for the parts of one answer (the badges and the strip share it). */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | null = null;
  return () => (value ??= load());
}

export async function renderLiveParts(
  deps: Deps,
  agentId: string,
  names: readonly string[],
  context: { csrf: string; viewer: Viewer; page: URL },
) {
  const state = await loadAgentState(deps, agentId);
  const now = deps.clock.now();
  const view: LiveView = { deps, agentId, state, now, ...context, attention: once(() => loadAttention(deps, agentId)) };
  const html: Record<string, string> = {};
  for (const name of new Set(names)) {
    const render = PARTS[name];
    if (!render) continue;
    const node = <>{await render(view)}</>;
    html[name] = String(await node.toString());
  }
  return {
    active: isBusy(state),
    running: state.running,
    runCounter: state.runCounter,
    sessionEpoch: state.sessionEpoch,
    at: new Date(now).toISOString(),
    html,
  };
}
