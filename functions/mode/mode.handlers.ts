/** Handlers of /api/agents/:agent/mode: the agent's mode, and switching it (audited). */
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { setAgentMode } from "../../jobs/agent-mode.ts";
import { readMode } from "../../jobs/read-models/action-decisions.ts";
import type { modeBody } from "../../jobs/agent-mode.ts";

type Ctx = Context<AppEnv>;

export async function getMode(c: Ctx, agentId: string) {
  return c.json({ agentId, mode: await readMode(c.get("deps"), agentId) });
}

export async function postMode(c: Ctx, agentId: string, body: z.infer<typeof modeBody>) {
  return c.json(await setAgentMode(c.get("deps"), c.get("operator"), agentId, body.mode));
}
