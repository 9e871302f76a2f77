/**
 * Handlers of the operator API for one agent: its state, chat and manual triggers (inbox
 * events), session reset, run records, the inbox, wakes and the conversation.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { resetAgentSession } from "../../jobs/reset-agent-session.ts";
import { getAgentState, getRun, listEvents, listRuns } from "../../pipeline/index.ts";
import { iso } from "../../runtime/time.ts";
import { listWakes } from "../../pipeline/index.ts";
import { listConversation } from "../../agent/prompt/conversation.ts";
import { ingestOperatorInput } from "../../auth/operator-input.ts";
import { RequestError } from "../../jobs/errors.ts";
import { idempotencyKey } from "../../jobs/agent-requests.ts";
import { presentAgent } from "../agents-admin/agents-admin.handlers.ts";

type Ctx = Context<AppEnv>;

function clientKey(c: Ctx): string {
  const given = c.req.header("Idempotency-Key");
  if (given === undefined) return crypto.randomUUID();
  const parsed = idempotencyKey.safeParse(given);
  if (!parsed.success) throw new RequestError(400, `invalid header Idempotency-Key: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

export async function getState(c: Ctx, agentId: string) {
  const { name, settings, archived } = presentAgent(c.get("agent"));
  return c.json({ ...(await getAgentState(c.get("deps"), agentId)), name, settings, archived });
}

export async function postMessage(c: Ctx, agentId: string, text: string) {
  const { eventId, duplicate } = await ingestOperatorInput(c.get("deps"), c.get("operator"), {
    action: "message",
    agentId,
    key: clientKey(c),
    text,
  });
  return c.json({ eventId, duplicate }, 202);
}

export async function postTrigger(c: Ctx, agentId: string, reason: string | undefined) {
  const { eventId, duplicate } = await ingestOperatorInput(c.get("deps"), c.get("operator"), {
    action: "trigger",
    agentId,
    key: clientKey(c),
    reason: reason ?? "manual trigger",
  });
  return c.json({ eventId, duplicate }, 202);
}

export async function postReset(c: Ctx, agentId: string, body: { clearMemory?: boolean | undefined }) {
  const { memoryCleared, ...reset } = await resetAgentSession(c.get("deps"), c.get("operator"), agentId, body.clearMemory === true);
  return c.json(body.clearMemory ? { ...reset, memoryCleared } : reset);
}

export async function getRuns(c: Ctx, agentId: string, limit: number) {
  return c.json({ runs: await listRuns(c.get("deps"), agentId, limit) });
}

export async function getOneRun(c: Ctx, agentId: string, runId: number) {
  const run = await getRun(c.get("deps"), agentId, runId);
  if (!run) throw new RequestError(404, `unknown run: ${runId}`);
  return c.json(run);
}

export async function getWakes(c: Ctx, agentId: string, status: string | undefined, limit: number) {
  const rows = await listWakes(c.get("deps"), agentId, status, limit);
  return c.json({
    wakes: rows.map((w) => ({
      id: w.id,
      dueAt: iso(w.dueAt),
      reason: w.reason,
      status: w.status,
      createdByRun: w.createdByRun,
      consumedByRun: w.consumedByRun,
      attempts: w.attempts,
      dropReason: w.dropReason,
    })),
  });
}

export async function getEvents(c: Ctx, agentId: string, status: string | undefined, limit: number) {
  return c.json({ events: await listEvents(c.get("deps"), agentId, status, limit) });
}

export async function getConversation(c: Ctx, agentId: string) {
  return c.json(await listConversation(c.get("deps"), agentId));
}
