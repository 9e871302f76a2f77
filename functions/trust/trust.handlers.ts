/**
 * Handlers of the routes that let a human check the agent: its pinned memory (list, delete one
 * fact), a run's LLM calls as sent and received, and a replay of a run against a model.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { listMemory } from "../../agent/memory.ts";
import { replayAsOperator } from "../../jobs/replay-as-operator.ts";
import { listLlmCalls } from "../../agent/llm/transcripts.ts";
import { RequestError } from "../../jobs/errors.ts";
import { deleteMemoryFact } from "../../jobs/delete-memory-fact.ts";
import { getRun } from "../../pipeline/index.ts";
import { iso } from "../../runtime/time.ts";

type Ctx = Context<AppEnv>;

export async function getMemory(c: Ctx, agentId: string) {
  const facts = await listMemory(c.get("deps"), agentId);
  return c.json({
    facts: facts.map((f) => ({
      key: f.key,
      fact: f.fact,
      untrusted: f.untrusted,
      createdByRun: f.createdByRun,
      updatedAt: iso(f.updatedAt),
    })),
  });
}

export async function deleteMemory(c: Ctx, agentId: string, key: string) {
  if (!(await deleteMemoryFact(c.get("deps"), c.get("operator"), agentId, key)))
    throw new RequestError(404, `no memory fact under key ${key}`);
  return c.json({ deleted: key });
}

export async function getLlmCalls(c: Ctx, agentId: string, runId: number) {
  if (!(await getRun(c.get("deps"), agentId, runId))) throw new RequestError(404, `unknown run: ${runId}`);
  const calls = await listLlmCalls(c.get("deps"), agentId, runId);
  return c.json({ calls: calls.map((call) => ({ ...call, createdAt: iso(call.createdAt) })) });
}

export async function postReplay(c: Ctx, agentId: string, runId: number, model: string | undefined) {
  return c.json(await replayAsOperator(c.get("deps"), c.get("operator"), agentId, runId, model));
}
