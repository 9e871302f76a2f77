/**
 * Shadow mode as the human-visible kill switch (issue #22): switching an agent between `act` and
 * `shadow` (the pause button on the overview, POST /api/agents/:agent/mode, or settings.mode in a
 * PATCH of the agents API), each switch audited in operator_activity (action `mode`, subject the
 * new mode) with the operator's name. Setting the mode rewrites only settings.mode, in one
 * statement, so it cannot undo a settings change made at the same time. Resuming acting hands
 * over what happened while paused (jobs/shadow-handover.ts).
 */
import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Deps } from "./deps.ts";
import { agents } from "../schema/index.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { updateAgent } from "../pipeline/index.ts";
import { handOverFromShadow } from "./shadow-handover.ts";
import { storedSettings, type AgentSettings } from "../runtime/agent-settings.ts";
import type { Config } from "../runtime/config.ts";

export type AgentMode = Config["mode"];

/** The body of POST /api/agents/:agent/mode and of the dashboard's pause switch. */
export const modeBody = z.object({ mode: z.enum(["act", "shadow"]) }).strict();

/** The mode the agent runs in: its setting, else AGENT_MODE. */
export function effectiveMode(config: Pick<Config, "mode">, settings: unknown): AgentMode {
  return storedSettings(settings).mode ?? config.mode;
}

/**
 * Sets the agent's mode and records who switched it (a switch to the mode it is in is recorded too:
 * someone pressed it). The mode before is read in the same transaction as the write, so of two
 * resumes at once exactly one sees shadow → act, and only that one hands over (jobs/shadow-handover.ts):
 * one event naming what broke and what was proposed while paused, and the run that decides on it.
 */
export async function setAgentMode(deps: Deps, who: Principal, agentId: string, mode: AgentMode) {
  const [[before]] = await deps.db.batch([
    deps.db.select({ settings: agents.settings }).from(agents).where(eq(agents.id, agentId)),
    deps.db
      .update(agents)
      .set({ settings: sql`json_set(coalesce(${agents.settings}, '{}'), '$.mode', ${mode})` })
      .where(eq(agents.id, agentId)),
  ]);
  // Through updateAgent with no change: it forgets the agent's cached row, so the switch applies now.
  await updateAgent(deps.db, agentId, {});
  await recordActivity(deps.db, who, { action: "mode", agentId, subject: mode, at: deps.clock.now() });
  const previous = before ? effectiveMode(deps.config, before.settings) : deps.config.mode;
  if (before && previous === "shadow" && mode === "act") await handOverFromShadow(deps, agentId, before.settings);
  return { agentId, mode, previous };
}

/** Audits a settings replacement that changes the agent's effective mode, as a switch would be. */
export async function auditModeChange(
  deps: Pick<Deps, "db" | "clock" | "config">,
  who: Principal,
  agentId: string,
  before: unknown,
  after: AgentSettings | undefined,
): Promise<void> {
  if (after === undefined) return;
  const from = effectiveMode(deps.config, before);
  const to = after.mode ?? deps.config.mode;
  if (from !== to) await recordActivity(deps.db, who, { action: "mode", agentId, subject: to, at: deps.clock.now() });
}
