/**
 * Rendering a dashboard response: the doctype, the frame every signed-in page shares (CSRF
 * token, simulated-fleet banner, the notice after an action, the selected agent and the others
 * to switch to), the selected agent kept in every internal link, and no caching of operator data.
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listAgents, type AgentRow } from "../../pipeline/index.ts";
import { keepAgentInLinks } from "./agent-links.ts";
import { loadAttention } from "../../jobs/read-models/attention.ts";
import { Layout, type AgentChoice, type Frame, type NavKey } from "./layout.tsx";
import { csrfToken } from "../sign-in/session.ts";
import { viewerOf } from "./can.ts";

type Ctx = Context<AppEnv>;

/** Notices shown after an action, chosen by key so no request text is ever echoed. */
const NOTICES: Record<string, string> = {
  triggered: "Trigger received: a run starts within the short (human) debounce window.",
  duplicate: "That form was already submitted; nothing new was queued.",
  sent: "Message sent. The reply appears in the thread when the agent’s run finishes.",
  reset: "Session reset: a new conversation epoch started. The run counter, wakes and fleet are unchanged.",
  "reset-memory": "Session reset and pinned memory cleared: the agent starts a new conversation with no facts pinned.",
  replayed: "Replayed: the result is below, under Replay. Nothing was executed.",
  "memory-deleted": "Fact deleted: the agent no longer sees it in its prompt.",
  "memory-unknown": "There was no fact under that key (already deleted?); nothing changed.",
  approved: "Approved: the agent is woken to carry the action out.",
  rejected: "Rejected: the agent is woken and will not take the action.",
  "action-succeeded": "Done: the provider carried the action out; it is in the instance's actions below.",
  "action-failed": "The action did not happen; the instance's actions below say why.",
  "action-proposed": "Recorded as a proposal: this agent is in shadow mode, so nothing reached the provider.",
  "action-awaiting-approval": "That action needs approval (APPROVAL_REQUIRED_ACTIONS): confirm it on the Approvals page.",
  "agent-created": "Agent created: it has its own inbox, runs and fleet view; open its dashboard from here.",
  "agent-saved": "Settings saved: they take effect on this agent's next run and tick.",
  "agent-archived": "Agent archived: no more ticks or runs; its history stays readable.",
  "agent-restored": "Agent restored: its ticks, runs and ingest resume.",
  "mode-shadow":
    "Paused: shadow mode. The agent keeps deciding, but its actions and approval requests are recorded as proposals; nothing reaches the provider.",
  "mode-act": "Resumed: the agent's decisions reach the provider again (within the run and hour bounds).",
  "block-lifted": "Block lifted: the agent and the rules policy may ask for that action again.",
  "failure-injected":
    "Failure injected into the simulated instance: it reports the new state as its webhook would, and the agent hears within the state debounce window.",
};

/** The frame of a signed-in page, with the navigation's counts of what waits for the operator. */
export async function frameFor(c: Ctx): Promise<Frame> {
  const deps = c.get("deps");
  const done = c.req.query("done");
  const agent = c.get("agent");
  const [attention, agents] = await Promise.all([loadAttention(deps, agent.id), listAgents(deps.db)]);
  return {
    agent: agentChoice(agent),
    agents: agents.map(agentChoice),
    csrf: await csrfToken(c),
    viewer: viewerOf(c.get("operator")),
    simulated: deps.provider.kind === "simulator",
    notice: done ? (NOTICES[done] ?? null) : null,
    badges: { approvals: attention.approvals.length, attention: attention.count },
    renderedAt: deps.clock.now(),
  };
}

const agentChoice = (row: AgentRow): AgentChoice => ({ id: row.id, name: row.name ?? row.id, archived: row.archivedAt !== null });

/** Rendered HTML on the selected agent (when one is selected: not on the sign-in page). */
async function renderOnAgent(c: Ctx, node: Child): Promise<string> {
  // biome-ignore lint/complexity/noUselessFragments: renders any Child, not only an element
  const html = String(await (<>{node}</>).toString());
  const agent = c.var.agent;
  return agent ? keepAgentInLinks(html, agent.id) : html;
}

export async function sendHtml(c: Ctx, node: Child, status: ContentfulStatusCode = 200) {
  c.header("Cache-Control", "no-store");
  return c.html(`<!DOCTYPE html>${await renderOnAgent(c, node)}`, status);
}

/** A signed-in page inside the shared layout. */
export async function sendPage(
  c: Ctx,
  page: { title: string; current: NavKey | null; busy?: boolean; frame?: Frame; status?: ContentfulStatusCode },
  content: Child,
) {
  const frame = page.frame ?? (await frameFor(c));
  return sendHtml(
    c,
    <Layout title={page.title} current={page.current} frame={frame} busy={page.busy}>
      {content}
    </Layout>,
    page.status,
  );
}
