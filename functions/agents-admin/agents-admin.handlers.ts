/**
 * Handlers of the agents API: create, list, update, archive and restore agents. Settings are shown
 * masked (channel URLs carry tokens, a provider setting its API key); a PATCH merges settings into
 * the stored ones (JSON Merge Patch), and one that sends a mask back unchanged keeps the stored secret; a provider setting without a usable key is refused;
 * archiving keeps every row of the agent's history.
 */
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { maskSettings, storedSettings } from "../../runtime/agent-settings.ts";
import { iso } from "../../runtime/time.ts";
import { createAgent, findAgent, listAgents, updateAgent, type AgentRow } from "../../pipeline/index.ts";
import { recordActivity } from "../../auth/activity.ts";
import { RequestError } from "../../jobs/errors.ts";
import { auditModeChange } from "../../jobs/agent-mode.ts";
import { archiveAsOperator, restoreAsOperator } from "../../jobs/agent-archive.ts";
import {
  assertProviderUsable,
  channelUrlIssue,
  mergeSettings,
  type createAgentBody,
  type patchAgentBody,
} from "../../jobs/agent-admin-requests.ts";
import type { AgentSettings } from "../../runtime/agent-settings.ts";
import { rotateAsOperator } from "../../jobs/agent-webhook-secret.ts";
import { newWebhookSecret } from "../../auth/webhook-secrets.ts";

type Ctx = Context<AppEnv>;

/** An agent as the API shows it: identity, masked settings, archive state. */
export function presentAgent(row: AgentRow) {
  return {
    id: row.id,
    name: row.name ?? row.id,
    settings: maskSettings(storedSettings(row.settings)),
    archived: row.archivedAt !== null,
    archivedAt: row.archivedAt === null ? null : iso(row.archivedAt),
    createdAt: iso(row.createdAt),
    // Whose secret verifies its webhooks, never the secret itself (shown once, on create or rotate).
    webhookSecret: {
      own: row.webhookSecret !== null,
      previousValidUntil: row.webhookSecretPreviousUntil === null ? null : iso(row.webhookSecretPreviousUntil),
    },
  };
}

export async function postAgent(c: Ctx, body: z.infer<typeof createAgentBody>) {
  const deps = c.get("deps");
  const now = deps.clock.now();
  assertProviderUsable(body.settings, deps.config);
  refuseChannelUrls(body.settings, {}, deps.config.allowPrivateUrls);
  const webhookSecret = newWebhookSecret();
  if (!(await createAgent(deps.db, { ...body, webhookSecret }, now))) throw new RequestError(409, `agent ${body.id} already exists`);
  await recordActivity(deps.db, c.get("operator"), { action: "agent_create", agentId: body.id, subject: body.id, at: now });
  // The only answer that carries the secret: it is not shown again (rotate to get a new one).
  return c.json({ ...presentAgent((await findAgent(deps.db, body.id))!), webhookSecret }, 201);
}

export async function postWebhookSecret(c: Ctx, agentId: string) {
  const rotated = await rotateAsOperator(c.get("deps"), c.get("operator"), agentId);
  return c.json({ agentId, webhookSecret: rotated.webhookSecret, previousValidUntil: iso(rotated.previousValidUntil) });
}

/** A channel URL this deployment may not send to: 400 naming the field, nothing written. */
function refuseChannelUrls(settings: AgentSettings | undefined, stored: AgentSettings, allowPrivate: boolean): void {
  const issue = channelUrlIssue(settings, stored, allowPrivate);
  if (issue) throw new RequestError(400, `invalid body: ${issue}`);
}

export async function getAgents(c: Ctx) {
  return c.json({ agents: (await listAgents(c.get("deps").db)).map(presentAgent) });
}

/**
 * Changes the name and/or merges the sent settings into the stored ones (JSON Merge Patch: a
 * `null` removes a key); a secret sent back as its mask stays as stored.
 */
export async function patchAgent(c: Ctx, agentId: string, body: z.infer<typeof patchAgentBody>) {
  const deps = c.get("deps");
  const before = await findAgent(deps.db, agentId);
  const stored = storedSettings(before?.settings);
  const settings = body.settings && mergeSettings(stored, body.settings);
  refuseChannelUrls(settings, stored, deps.config.allowPrivateUrls);
  assertProviderUsable(settings, deps.config);
  await updateAgent(deps.db, agentId, { name: body.name, settings });
  await recordActivity(deps.db, c.get("operator"), {
    action: "agent_update",
    agentId,
    subject: Object.keys(body).join(","),
    at: deps.clock.now(),
  });
  await auditModeChange(deps, c.get("operator"), agentId, before?.settings, settings);
  return c.json(presentAgent((await findAgent(deps.db, agentId))!));
}

export async function deleteAgent(c: Ctx, agentId: string) {
  const deps = c.get("deps");
  await archiveAsOperator(deps, c.get("operator"), agentId);
  return c.json(presentAgent((await findAgent(deps.db, agentId))!));
}

export async function postRestore(c: Ctx, agentId: string) {
  const deps = c.get("deps");
  await restoreAsOperator(deps, c.get("operator"), agentId);
  return c.json(presentAgent((await findAgent(deps.db, agentId))!));
}
