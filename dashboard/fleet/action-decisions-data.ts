/** What the decision views read: an agent's mode and latest proposals, and a run's actions. */
import { and, asc, desc, eq } from "drizzle-orm";
import type { Deps } from "../../jobs/deps.ts";
import { actions } from "../../schema/index.ts";
import { presentAction } from "../../fleet/actions/actions.ts";
import { effectiveMode } from "../../jobs/agent-mode.ts";
import { findAgent } from "../../pipeline/index.ts";

export const PROPOSALS_SHOWN = 10;

export async function loadModeSwitch(deps: Pick<Deps, "db" | "config">, agentId: string) {
  const [row, proposals] = await Promise.all([
    findAgent(deps.db, agentId),
    deps.db.select().from(actions).where(and(eq(actions.agentId, agentId), eq(actions.status, "proposed"))).orderBy(desc(actions.id)).limit(PROPOSALS_SHOWN),
  ]);
  return { mode: effectiveMode(deps.config, row?.settings), proposals: proposals.map(presentAction) };
}

export async function listRunActions(deps: Pick<Deps, "db">, agentId: string, runId: number) {
  const rows = await deps.db.select().from(actions).where(and(eq(actions.agentId, agentId), eq(actions.runId, runId))).orderBy(asc(actions.id));
  return rows.map(presentAction);
}
