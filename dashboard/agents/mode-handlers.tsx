/** The overview's pause switch: POST /mode {mode} sets the selected agent's mode, audited, then back to the overview. */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { modeBody, setAgentMode } from "../../jobs/agent-mode.ts";
import { describeIssues } from "../../jobs/validate.ts";
import { agentPath } from "../shell/agent-links.ts";
import { selectedAgentId } from "../shell/selected-agent.tsx";

export async function postMode(c: Context<AppEnv>) {
  const parsed = modeBody.safeParse({ mode: (await c.req.parseBody()).mode });
  if (!parsed.success) throw new RequestError(400, `invalid form: ${describeIssues(parsed.error.issues)}`);
  const agentId = selectedAgentId(c);
  await setAgentMode(c.get("deps"), c.get("operator"), agentId, parsed.data.mode);
  return c.redirect(agentPath(`/?done=mode-${parsed.data.mode}`, agentId), 303);
}
