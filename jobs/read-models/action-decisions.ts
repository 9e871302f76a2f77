/**
 * Read model of the decision views (the overview's mode switch, a run's page): an agent's mode
 * (the same read as GET /api/agents/:agent/mode) and its latest proposals (shadow mode's record of
 * what it would have done), and a run's actions.
 */
import { and, asc, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Config } from "../../runtime/config.ts";
import { actions } from "../../schema/index.ts";
import { presentAction } from "../../fleet/actions/actions.ts";
import { effectiveMode } from "../agent-mode.ts";
import { findAgent } from "../../pipeline/index.ts";

export const PROPOSALS_SHOWN = 10;

type ModePorts = { db: Db; config: Pick<Config, "mode"> };

/** The mode the agent runs in now: its own setting, else AGENT_MODE. */
export async function readMode(deps: ModePorts, agentId: string) {
  const row = await findAgent(deps.db, agentId);
  return effectiveMode(deps.config, row?.settings);
}

export async function loadModeSwitch(deps: ModePorts, agentId: string) {
  const [mode, proposals] = await Promise.all([
    readMode(deps, agentId),
    deps.db
      .select()
      .from(actions)
      .where(and(eq(actions.agentId, agentId), eq(actions.status, "proposed")))
      .orderBy(desc(actions.id))
      .limit(PROPOSALS_SHOWN),
  ]);
  return { mode, proposals: proposals.map(presentAction) };
}

export async function listRunActions(deps: { db: Db }, agentId: string, runId: number) {
  const rows = await deps.db
    .select()
    .from(actions)
    .where(and(eq(actions.agentId, agentId), eq(actions.runId, runId)))
    .orderBy(asc(actions.id));
  return rows.map(presentAction);
}
