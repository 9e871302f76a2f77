/**
 * The posts that let an operator check the agent: delete one pinned fact (the memory panel), and
 * replay a run against a model ("Replay with…" on the run's page). Both act on the selected agent
 * and redirect back (post/redirect/get).
 */
import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { deleteMemoryFact } from "../../jobs/delete-memory-fact.ts";
import { RequestError } from "../../jobs/errors.ts";
import { describeIssues } from "../../jobs/validate.ts";
import { replayAsOperator } from "../../jobs/replay-as-operator.ts";
import { agentPath } from "../shell/agent-links.ts";
import { selectedAgentId } from "../shell/selected-agent.tsx";

type Ctx = Context<AppEnv>;

const replayForm = z.object({
  model: z
    .string()
    .trim()
    .max(200, "must be at most 200 characters")
    .regex(/^[\w./:@-]*$/, "must be a model name (letters, digits, _ . / : @ -)")
    .optional(),
});

export async function postDeleteFact(c: Ctx) {
  const agentId = selectedAgentId(c);
  const deleted = await deleteMemoryFact(c.get("deps"), c.get("operator"), agentId, c.req.param("key") ?? "");
  return c.redirect(agentPath(`/?done=${deleted ? "memory-deleted" : "memory-unknown"}`, agentId), 303);
}

export async function postReplay(c: Ctx) {
  const deps = c.get("deps");
  const agentId = selectedAgentId(c);
  const runId = Number(c.req.param("runId"));
  if (!Number.isSafeInteger(runId) || runId <= 0) throw new RequestError(404, `unknown run: ${c.req.param("runId")}`);
  const parsed = replayForm.safeParse(await c.req.parseBody());
  if (!parsed.success) throw new RequestError(400, `invalid form: ${describeIssues(parsed.error.issues)}`);
  await replayAsOperator(deps, c.get("operator"), agentId, runId, parsed.data.model || undefined);
  return c.redirect(agentPath(`/runs/${runId}?done=replayed`, agentId), 303);
}
