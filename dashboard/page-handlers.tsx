/** The signed-in pages: each reads its read models and renders its page in the shared layout. */
import type { Context } from "hono";
import type { AppEnv } from "../functions/app-env.ts";
import { listConversation } from "../agent/conversation.ts";
import { listApprovals } from "../fleet/approvals.ts";
import { listInstances } from "../fleet/list-instances.ts";
import { listNotifications } from "../notify/list-notifications.ts";
import { DEFAULT_AGENT } from "../triggers/agents.ts";
import { listRuns } from "../triggers/agent-state.ts";
import { listWakes } from "../triggers/wakes.ts";
import { ApprovalsPage } from "./approvals.tsx";
import { ChatPage } from "./chat.tsx";
import { listChatThread } from "./chat-thread.ts";
import { FleetPage } from "./fleet.tsx";
import { LIVE_PART_NAMES, renderLiveParts, TIMELINE_RUNS } from "./live.tsx";
import { NotificationsList } from "./notifications.tsx";
import { OverviewPage } from "./overview.tsx";
import { isBusy, loadAgentState, loadOverview } from "./overview-data.ts";
import { frameFor, sendPage } from "./render.tsx";
import { RunDetailPage } from "./run-detail.tsx";
import { getRunRecord } from "./run-record.ts";
import { RunsPage } from "./runs.tsx";
import { WakesPage } from "./wakes.tsx";

type Ctx = Context<AppEnv>;
const agentId = DEFAULT_AGENT;

export async function overviewPage(c: Ctx) {
  const deps = c.get("deps");
  const data = await loadOverview(deps, agentId);
  const frame = await frameFor(c);
  return sendPage(c, { title: "Overview", current: "overview", busy: isBusy(data.state), frame }, <OverviewPage data={data} csrf={frame.csrf} />);
}

export async function runsPage(c: Ctx) {
  const deps = c.get("deps");
  const [state, runs] = await Promise.all([loadAgentState(deps, agentId), listRuns(deps, agentId, TIMELINE_RUNS)]);
  const frame = await frameFor(c);
  return sendPage(c, { title: "Runs", current: "runs", busy: isBusy(state), frame }, <RunsPage runs={runs} now={deps.clock.now()} csrf={frame.csrf} />);
}

export async function runDetailPage(c: Ctx) {
  const deps = c.get("deps");
  const runId = Number(c.req.param("runId"));
  const record = Number.isSafeInteger(runId) && runId > 0 ? await getRunRecord(deps, agentId, runId) : null;
  if (!record) {
    return sendPage(c, { title: "Run not found", current: "runs", status: 404 }, <p>{`There is no run ${c.req.param("runId")}. `}<a href="/runs">All runs</a></p>);
  }
  return sendPage(c, { title: `Run #${runId}`, current: "runs" }, <RunDetailPage record={record} now={deps.clock.now()} />);
}

export async function wakesPage(c: Ctx) {
  const deps = c.get("deps");
  const [pending, all] = await Promise.all([listWakes(deps, agentId, "pending", 200), listWakes(deps, agentId, undefined, 200)]);
  const history = all.filter((w) => w.status !== "pending");
  return sendPage(c, { title: "Wakes", current: "wakes" }, <WakesPage pending={pending} history={history} now={deps.clock.now()} />);
}

export async function notificationsPage(c: Ctx) {
  const deps = c.get("deps");
  const notifications = await listNotifications(deps, agentId, 100);
  return sendPage(c, { title: "Notifications", current: "notifications" }, <NotificationsList notifications={notifications} now={deps.clock.now()} />);
}

export async function fleetPage(c: Ctx) {
  const deps = c.get("deps");
  const instances = await listInstances(deps, agentId);
  return sendPage(c, { title: "Fleet", current: "fleet" }, <FleetPage instances={instances} now={deps.clock.now()} provider={deps.provider.kind} />);
}

export async function approvalsPage(c: Ctx) {
  const deps = c.get("deps");
  const approvals = await listApprovals(deps, agentId, undefined, 100);
  const frame = await frameFor(c);
  return sendPage(c, { title: "Approvals", current: "approvals", frame }, <ApprovalsPage approvals={approvals} csrf={frame.csrf} now={deps.clock.now()} />);
}

export async function chatPage(c: Ctx, error: string | null = null) {
  const deps = c.get("deps");
  const [entries, conversation, state] = await Promise.all([
    listChatThread(deps, agentId),
    listConversation(deps, agentId),
    loadAgentState(deps, agentId),
  ]);
  const frame = await frameFor(c);
  return sendPage(
    c,
    { title: "Chat", current: "chat", busy: isBusy(state), frame, status: error ? 400 : 200 },
    <ChatPage entries={entries} now={deps.clock.now()} csrf={frame.csrf} sessionEpoch={conversation.sessionEpoch} summary={conversation.summary} error={error} />,
  );
}

/** JSON for the live script: re-rendered regions named in `?parts=`. */
export async function livePartsJson(c: Ctx) {
  const names = (c.req.query("parts") ?? "").split(",").filter((name) => LIVE_PART_NAMES.includes(name));
  c.header("Cache-Control", "no-store");
  return c.json(await renderLiveParts(c.get("deps"), agentId, names));
}
