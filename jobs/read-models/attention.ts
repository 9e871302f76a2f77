/**
 * What needs an operator's attention first, for the overview's strip and the navigation badges:
 * approvals waiting for a decision, instances not running as intended (a failed state, stuck in
 * created/loading, a missed heartbeat, an action a human rejected lately), and the LLM's state
 * (configured or not, its circuit breaker, whether the rules policy decided the latest run), and
 * the fleet's economics (idle instances; once for the agent, over its daily limit).
 * Read from the database on every render, so it clears as soon as the condition does. The
 * watchdog and the breaker are the same read as GET /api/agents/:agent/health (agent-health.ts),
 * which is why this takes the whole Deps.
 */
import { and, desc, eq, gte, inArray } from "drizzle-orm";
import { readAgentHealth } from "./agent-health.ts";
import { listInstances, type InstanceView } from "../../fleet/instances/list-instances.ts";
import type { Deps } from "../deps.ts";
import { actions, approvals, runs } from "../../schema/index.ts";
import { economicReasons, overBudgetFact, type OverBudget } from "./attention-economics.ts";
import { stallReasons } from "./attention-stall.ts";
import { stallSettings } from "../../fleet/instances/stall.ts";
import { loadSpend } from "./spend.ts";

/** States a restart or a human must resolve: the instance is not doing what it is for. */
const FAILED_STATES = new Set(["exited", "frozen", "offline", "unknown"]);
const STARTING_STATES = new Set(["created", "loading"]);
/** An instance still starting after this long is shown as stuck. */
export const STUCK_STARTING_MS = 15 * 60_000;
/** A rejected action stays on the strip this long (the agent honours the "no" meanwhile). */
export const REJECTED_SHOWN_MS = 24 * 3_600_000;

export interface InstanceAttention {
  id: string;
  label: string | null;
  state: string;
  reasons: string[];
}

export interface PendingApproval {
  id: number;
  kind: string;
  instanceId: string | null;
  createdAt: number;
}

export interface LlmState {
  configured: boolean;
  breakerOpenUntil: number | null;
  /** The latest finished run was decided by the rules policy although an LLM is configured. */
  fallingBack: boolean;
}

export interface Attention {
  approvals: PendingApproval[];
  instances: InstanceAttention[];
  llm: LlmState;
  /** The loop watchdog's open conditions (GET /api/agents/:agent/health). */
  watchdog: Awaited<ReturnType<typeof readAgentHealth>>["watchdog"];
  /** The agent spent its daily limit today (one item, not one per instance). */
  overBudget: OverBudget | null;
  checkedAt: number;
  /** Everything above that needs a person: the attention badge's number. */
  count: number;
}

export function instanceReasons(i: InstanceView, now: number, rejectedKinds: string[]): string[] {
  if (i.gone) return [];
  const reasons: string[] = [];
  const since = i.stateAt ? now - new Date(i.stateAt).getTime() : 0;
  if (FAILED_STATES.has(i.state)) reasons.push(i.statusMessage ?? `reported ${i.state}`);
  if (STARTING_STATES.has(i.state) && since >= STUCK_STARTING_MS) reasons.push(`stuck ${i.state} for ${Math.round(since / 60_000)} min`);
  if (i.heartbeatMissedAt) reasons.push("heartbeat missed");
  for (const kind of rejectedKinds) reasons.push(`a human rejected ${kind}`);
  return reasons;
}

export async function loadAttention(deps: Deps, agentId: string): Promise<Attention> {
  const { db } = deps;
  const now = deps.clock.now();
  const [fleet, pending, rejected, lastRun, health, spend] = await Promise.all([
    listInstances(deps, agentId),
    db
      .select({ id: approvals.id, kind: approvals.kind, instanceId: approvals.instanceId, createdAt: approvals.createdAt })
      .from(approvals)
      .where(and(eq(approvals.agentId, agentId), eq(approvals.status, "pending")))
      .orderBy(approvals.id),
    db
      .select({ instanceId: actions.instanceId, kind: actions.kind })
      .from(actions)
      .where(and(eq(actions.agentId, agentId), eq(actions.status, "rejected"), gte(actions.createdAt, now - REJECTED_SHOWN_MS))),
    db
      .select({ decider: runs.decider })
      .from(runs)
      .where(and(eq(runs.agentId, agentId), inArray(runs.status, ["succeeded", "failed", "crashed"])))
      .orderBy(desc(runs.runId))
      .limit(1),
    readAgentHealth(deps, agentId),
    loadSpend(deps, agentId),
  ]);
  const instances = fleet
    .map((i) => {
      const kinds = [...new Set(rejected.filter((r) => r.instanceId === i.id).map((r) => r.kind))];
      const reasons = [
        ...instanceReasons(i, now, kinds),
        ...economicReasons(i, now, deps.config.economics),
        ...stallReasons(i, now, stallSettings(deps.config)),
      ];
      return { id: i.id, label: i.label, state: i.state, reasons };
    })
    .filter((i) => i.reasons.length > 0);
  // The selected agent's breaker for its own model: another agent's failures are not shown here.
  const { watchdog } = health;
  const breakerOpenUntil = health.llm?.breakerOpenUntil ?? null;
  const configured = deps.llm !== null;
  const llm = { configured, breakerOpenUntil, fallingBack: configured && lastRun[0]?.decider === "rules" };
  const overBudget = overBudgetFact(fleet, spend);
  const count =
    (overBudget ? 1 : 0) +
    watchdog.conditions.length +
    pending.length +
    instances.length +
    (breakerOpenUntil !== null ? 1 : 0) +
    (llm.fallingBack && breakerOpenUntil === null ? 1 : 0);
  return { approvals: pending, instances, llm, watchdog, overBudget, checkedAt: now, count };
}
