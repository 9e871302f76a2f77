/**
 * The signed-in pages: each reads its read models for the selected agent (selected-agent.tsx)
 * and renders its page in the shared layout.
 */
import { listOpenReplacements } from "../fleet/replacement/replacement-rows.ts";
import { ReplacementsInProgress } from "./fleet/replacements.tsx";
import type { Context } from "hono";
import type { AppEnv } from "../jobs/app-env.ts";
import { RequestError } from "../jobs/errors.ts";
import { listConversation } from "../agent/prompt/conversation.ts";
import { listApprovals } from "../fleet/actions/approvals.ts";
import { listInstances } from "../fleet/instances/list-instances.ts";
import { listNotifications } from "../notify/list-notifications.ts";
import { hasRole } from "../auth/roles.ts";
import { listWakes } from "../pipeline/index.ts";
import { ApprovalsPage } from "./approvals/approvals.tsx";
import { ActiveBlocks } from "./approvals/approval-blocks.tsx";
import { listBlocks } from "../fleet/actions/action-blocks.ts";
import { ChatPage } from "./chat/chat.tsx";
import { loadChatThread } from "../jobs/read-models/chat-thread.ts";
import { FleetPage } from "./fleet/fleet.tsx";
import { arrangeFleet, parseFleetQuery } from "./fleet/fleet-query.ts";
import { InstanceDetail } from "./fleet/instance-page.tsx";
import { getInstanceRecord } from "../jobs/read-models/instance-record.ts";
import { APPROVALS_SHOWN, LIVE_PART_NAMES, NOTIFICATIONS_SHOWN, renderLiveParts, TIMELINE_RUNS } from "./live.tsx";
import { NotificationsPage } from "./approvals/notifications.tsx";
import { OverviewPage } from "./overview/overview.tsx";
import { isBusy, loadAgentState, loadOverview } from "../jobs/read-models/overview.ts";
import { listRunActions, loadModeSwitch } from "../jobs/read-models/action-decisions.ts";
import { frameFor, sendPage } from "./shell/render.tsx";
import { RunDetailPage } from "./runs/run-detail.tsx";
import { getRunRecord } from "../jobs/read-models/run-record.ts";
import { listRunRows } from "../jobs/read-models/run-list.ts";
import { RunsPage } from "./runs/runs.tsx";
import { keepAgentInLinks } from "./shell/agent-links.ts";
import { selectedAgentId } from "./shell/selected-agent.tsx";
import { csrfToken } from "./sign-in/session.ts";
import { WakesPage } from "./runs/wakes.tsx";
import { loadLogs, LogsPanel } from "./fleet/instance-logs.tsx";
import { viewerOf } from "./shell/can.ts";

type Ctx = Context<AppEnv>;

export async function overviewPage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const [data, mode] = await Promise.all([loadOverview(deps, agentId), loadModeSwitch(deps, agentId)]);
  const frame = await frameFor(c);
  return sendPage(
    c,
    { title: "Overview", current: "overview", busy: isBusy(data.state), frame },
    <OverviewPage data={data} csrf={frame.csrf} mode={mode} viewer={frame.viewer} />,
  );
}

export async function runsPage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const [state, runs] = await Promise.all([loadAgentState(deps, agentId), listRunRows(deps, agentId, TIMELINE_RUNS)]);
  const frame = await frameFor(c);
  return sendPage(
    c,
    { title: "Runs", current: "runs", busy: isBusy(state), frame },
    <RunsPage runs={runs} now={deps.clock.now()} csrf={frame.csrf} viewer={frame.viewer} />,
  );
}

export async function runDetailPage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const runId = Number(c.req.param("runId"));
  const record = Number.isSafeInteger(runId) && runId > 0 ? await getRunRecord(deps, agentId, runId) : null;
  if (!record) {
    return sendPage(
      c,
      { title: "Run not found", current: "runs", status: 404 },
      <p>
        {`There is no run ${c.req.param("runId")}. `}
        <a href="/runs">All runs</a>
      </p>,
    );
  }
  const busy = record.run.status === "running";
  const actions = await listRunActions(deps, agentId, runId);
  const frame = await frameFor(c);
  return sendPage(
    c,
    { title: `Run #${runId}`, current: "runs", busy, frame },
    <RunDetailPage record={record} now={deps.clock.now()} actions={actions} csrf={frame.csrf} canReplay={frame.viewer.can("replay")} />,
  );
}

export async function wakesPage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const [pending, all] = await Promise.all([listWakes(deps, agentId, "pending", 200), listWakes(deps, agentId, undefined, 200)]);
  const history = all.filter((w) => w.status !== "pending");
  return sendPage(c, { title: "Wakes", current: "wakes" }, <WakesPage pending={pending} history={history} now={deps.clock.now()} />);
}

export async function notificationsPage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const notifications = await listNotifications(deps, agentId, NOTIFICATIONS_SHOWN, { withErrors: hasRole(c.get("operator"), "admin") });
  return sendPage(
    c,
    { title: "Notifications", current: "notifications" },
    <NotificationsPage notifications={notifications} now={deps.clock.now()} />,
  );
}

export async function fleetPage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const query = parseFleetQuery(c.req.query());
  const [all, replacing] = await Promise.all([listInstances(deps, agentId), listOpenReplacements(deps, agentId)]);
  const frame = await frameFor(c);
  return sendPage(
    c,
    { title: "Fleet", current: "fleet", frame },
    <>
      <ReplacementsInProgress replacements={replacing} />
      <FleetPage
        all={all}
        shown={arrangeFleet(all, query)}
        query={query}
        now={deps.clock.now()}
        provider={deps.provider.kind}
        csrf={frame.csrf}
        economics={deps.config.economics}
        canFail={frame.viewer.can("simulateFailure")}
      />
    </>,
  );
}

export async function instancePage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const id = c.req.param("instanceId") ?? "";
  const record = await getInstanceRecord(deps, agentId, id);
  if (!record) {
    return sendPage(
      c,
      { title: "Instance not found", current: "fleet", status: 404 },
      <p>
        {`There is no instance ${id}. `}
        <a href="/fleet">Fleet</a>
      </p>,
    );
  }
  const frame = await frameFor(c);
  const logs = await loadLogs(deps, frame.viewer, id);
  return sendPage(
    c,
    { title: `Instance ${record.instance.label ? `${record.instance.label} (${id})` : id}`, current: "fleet", frame },
    <>
      <p>
        <a href="/fleet">← Fleet</a>
      </p>
      <div data-live="instance">
        <InstanceDetail
          record={record}
          now={deps.clock.now()}
          csrf={frame.csrf}
          simulated={deps.provider.kind === "simulator"}
          approvalRequired={deps.config.approvalRequired}
          viewer={frame.viewer}
          capabilities={deps.provider.capabilities}
        />
      </div>
      {record.instance.gone ? null : <LogsPanel logs={logs} />}
    </>,
  );
}

export async function approvalsPage(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const approvals = await listApprovals(deps, agentId, undefined, APPROVALS_SHOWN);
  const frame = await frameFor(c);
  const blocks = await listBlocks(deps, agentId, true);
  const role = c.get("operator").role;
  return sendPage(
    c,
    { title: "Approvals", current: "approvals", frame },
    <>
      <ApprovalsPage approvals={approvals} csrf={frame.csrf} now={deps.clock.now()} role={role} />
      <ActiveBlocks blocks={blocks} csrf={frame.csrf} role={role} />
    </>,
  );
}

/** `kept`: a refused post's status and its typed text, put back in the form. */
export async function chatPage(c: Ctx, error: string | null = null, kept: { status: 400 | 403; text: string } | null = null) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const [thread, conversation, state] = await Promise.all([
    loadChatThread(deps, agentId),
    listConversation(deps, agentId),
    loadAgentState(deps, agentId),
  ]);
  const frame = await frameFor(c);
  return sendPage(
    c,
    { title: "Chat", current: "chat", busy: isBusy(state), frame, status: kept?.status ?? (error ? 400 : 200) },
    <ChatPage
      thread={thread}
      now={deps.clock.now()}
      csrf={frame.csrf}
      sessionEpoch={conversation.sessionEpoch}
      summary={conversation.summary}
      error={error}
      text={kept?.text ?? ""}
      viewer={frame.viewer}
    />,
  );
}

/**
 * JSON for the live script: re-rendered regions named in `?parts=`, as on the page `?page=` (a path),
 * of the agent in `?agent=` (the script sends its page's).
 */
export async function livePartsJson(c: Ctx) {
  const names = (c.req.query("parts") ?? "").split(",").filter((name) => LIVE_PART_NAMES.includes(name));
  const pagePath = c.req.query("page") ?? "/";
  if (!pagePath.startsWith("/") || pagePath.startsWith("//")) throw new RequestError(400, "invalid page: must be a path on this site");
  c.header("Cache-Control", "no-store");
  const page = new URL(pagePath, "http://dashboard.local");
  const agentId = selectedAgentId(c);
  const live = await renderLiveParts(c.get("deps"), agentId, names, {
    csrf: await csrfToken(c),
    viewer: viewerOf(c.get("operator")),
    page,
  });
  const html = Object.fromEntries(Object.entries(live.html).map(([name, part]) => [name, keepAgentInLinks(part, agentId)]));
  return c.json({ ...live, html });
}
