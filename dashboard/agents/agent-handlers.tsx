/**
 * The agents page's handlers: list, one agent, and the admin's three posts (create, change
 * settings, archive; the routes have checked origin, session, CSRF token and the admin role).
 * Each post goes through the agents API's own schemas (agent-form.ts) and the same store
 * functions (pipeline/agents.ts): bad input re-renders the form with the problem named and
 * writes nothing; success redirects (post/redirect/get). The agent changed is the one in the
 * path; the selected agent (`?agent=`) only decides which agent the navigation stays on.
 */
import { effectiveSettings } from "./effective-settings.tsx";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../../jobs/app-env.ts";
import { recordActivity } from "../../auth/activity.ts";
import { newWebhookSecret } from "../../auth/webhook-secrets.ts";
import { hasRole } from "../../auth/roles.ts";
import { storedSettings } from "../../runtime/agent-settings.ts";
import { RequestError } from "../../jobs/errors.ts";
import { archiveAsOperator, restoreAsOperator } from "../../jobs/agent-archive.ts";
import { createAgent, findAgent, listAgents, updateAgent, type AgentRow } from "../../pipeline/index.ts";
import { agentPath } from "../shell/agent-links.ts";
import { channelUrlIssue } from "../../jobs/agent-admin-requests.ts";
import {
  agentChangeFromForm,
  agentFormFields,
  EMPTY_AGENT_FORM,
  newAgentFromForm,
  readAgentForm,
  type AgentFormFields,
} from "./agent-form.ts";
import { AgentPage, AgentsPage, type AgentSummary } from "./agents-page.tsx";
import { loadAttention } from "../../jobs/read-models/attention.ts";
import { sendPage } from "../shell/render.tsx";
import { selectedAgentId } from "../shell/selected-agent.tsx";
import { csrfToken } from "../sign-in/session.ts";

type Ctx = Context<AppEnv>;

/** An agent with what waits on it; attention is read from its own rows (bounded by the agent count). */
async function summarise(c: Ctx, row: AgentRow): Promise<AgentSummary> {
  const attention = await loadAttention(c.get("deps"), row.id);
  return {
    id: row.id,
    name: row.name ?? row.id,
    archivedAt: row.archivedAt,
    approvals: attention.approvals.length,
    attention: attention.count,
    settings: storedSettings(row.settings),
  };
}

const canChange = (c: Ctx) => hasRole(c.get("operator"), "admin");

async function renderList(c: Ctx, form: { fields?: AgentFormFields; error?: string; status?: ContentfulStatusCode } = {}) {
  const agents = await Promise.all((await listAgents(c.get("deps").db)).map((row) => summarise(c, row)));
  return sendPage(
    c,
    { title: "Agents", current: "agents", status: form.status },
    <AgentsPage
      agents={agents}
      canChange={canChange(c)}
      csrf={await csrfToken(c)}
      fields={form.fields ?? EMPTY_AGENT_FORM}
      error={form.error}
      defaults={effectiveSettings(c.get("hostConfig"), {})}
    />,
  );
}

async function renderOne(
  c: Ctx,
  row: AgentRow,
  form: { fields?: AgentFormFields; error?: string; status?: ContentfulStatusCode; webhookSecret?: string } = {},
) {
  const agent = await summarise(c, row);
  const fields = form.fields ?? agentFormFields({ id: row.id, name: row.name, settings: agent.settings });
  return sendPage(
    c,
    { title: `Agent ${agent.name === agent.id ? agent.id : `${agent.name} (${agent.id})`}`, current: "agents", status: form.status },
    <AgentPage
      agent={agent}
      canChange={canChange(c)}
      csrf={await csrfToken(c)}
      fields={fields}
      error={form.error}
      effective={effectiveSettings(c.get("hostConfig"), agent.settings)}
      webhookSecret={form.webhookSecret}
    />,
  );
}

function notFound(c: Ctx) {
  const id = c.req.param("agentId") ?? "";
  return sendPage(
    c,
    { title: "Agent not found", current: "agents", status: 404 },
    <p>
      {`There is no agent “${id}”. `}
      <a href="/agents">All agents</a>
    </p>,
  );
}

/** The agent named in the path, or null. */
const pathAgent = (c: Ctx) => findAgent(c.get("deps").db, c.req.param("agentId") ?? "");

const backTo = (c: Ctx, path: string) => c.redirect(agentPath(path, selectedAgentId(c)), 303);

export const agentsPage = (c: Ctx) => renderList(c);

export async function agentPage(c: Ctx) {
  const row = await pathAgent(c);
  return row ? renderOne(c, row) : notFound(c);
}

export async function postAgent(c: Ctx) {
  const fields = readAgentForm(await c.req.parseBody({ all: true }));
  const body = newAgentFromForm(fields);
  if (!body.ok) return renderList(c, { fields, error: `Not created: ${body.error}.`, status: 400 });
  const urlIssue = channelUrlIssue(body.value.settings, {}, c.get("deps").config.allowPrivateUrls);
  if (urlIssue) return renderList(c, { fields, error: `Not created: ${urlIssue}.`, status: 400 });
  const { db, clock } = c.get("deps");
  const webhookSecret = newWebhookSecret();
  if (!(await createAgent(db, { ...body.value, webhookSecret }, clock.now())))
    return renderList(c, { fields, error: `Not created: agent ${body.value.id} already exists.`, status: 409 });
  await recordActivity(db, c.get("operator"), { action: "agent_create", agentId: body.value.id, subject: body.value.id, at: clock.now() });
  // The new agent's page, answered (not redirected to) so its webhook secret is shown this once.
  return renderOne(c, (await findAgent(db, body.value.id))!, { webhookSecret, status: 201 });
}

export async function postAgentSettings(c: Ctx) {
  const row = await pathAgent(c);
  if (!row) return notFound(c);
  const fields = { ...readAgentForm(await c.req.parseBody({ all: true })), id: row.id };
  const change = agentChangeFromForm(fields, storedSettings(row.settings));
  if (!change.ok) return renderOne(c, row, { fields, error: `Not saved: ${change.error}.`, status: 400 });
  const urlIssue = channelUrlIssue(change.value.settings, storedSettings(row.settings), c.get("deps").config.allowPrivateUrls);
  if (urlIssue) return renderOne(c, row, { fields, error: `Not saved: ${urlIssue}.`, status: 400 });
  const { db, clock } = c.get("deps");
  await updateAgent(db, row.id, change.value);
  await recordActivity(db, c.get("operator"), { action: "agent_update", agentId: row.id, subject: "name,settings", at: clock.now() });
  return backTo(c, `/agents/${encodeURIComponent(row.id)}?done=agent-saved`);
}

export async function postArchive(c: Ctx) {
  const row = await pathAgent(c);
  if (!row) return notFound(c);
  if ((await c.req.parseBody()).confirm !== "yes")
    return renderOne(c, row, { error: "Not archived: tick the box to confirm.", status: 400 });
  try {
    await archiveAsOperator(c.get("deps"), c.get("operator"), row.id);
  } catch (err) {
    if (err instanceof RequestError) return renderOne(c, row, { error: `Not archived: ${err.message}.`, status: 409 });
    throw err;
  }
  return backTo(c, `/agents/${encodeURIComponent(row.id)}?done=agent-archived`);
}

export async function postRestore(c: Ctx) {
  const row = await pathAgent(c);
  if (!row) return notFound(c);
  await restoreAsOperator(c.get("deps"), c.get("operator"), row.id);
  return backTo(c, `/agents/${encodeURIComponent(row.id)}?done=agent-restored`);
}
