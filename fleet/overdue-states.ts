/**
 * Escalation, never silence (a cron check): an instance that does not get where it should
 * becomes one inbox event (source `overdue`, priority 1), so the agent or the rules policy acts
 * on it. Two ways to be overdue:
 * - an expectation left by the agent's own action (fleet/expectations.ts) whose deadline passed
 *   with the instance not in the expected state;
 * - an instance in `created` or `loading` for longer than LOADING_TIMEOUT_S, action or not.
 * Each is keyed by what it is about (the instance's state time, or the expectation's deadline),
 * so a stuck instance is raised once per stuck state, not on every tick; a stuck instance that
 * was also expected to come up is raised once, as stuck.
 */
import { and, eq, inArray, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { Deps } from "../runtime/deps.ts";
import { instances } from "../schema/index.ts";
import { ingestEvent } from "../triggers/ingest.ts";
import type { TickCheck } from "../triggers/cron-tick.ts";

/** States an instance should only pass through. */
export const LOADING_STATES = ["created", "loading"] as const;

type Row = typeof instances.$inferSelect;

export async function raiseOverdueStates(deps: Deps, agentId: string): Promise<string[]> {
  const { db, clock, config } = deps;
  const now = clock.now();
  const stuckBefore = now - config.loadingTimeoutMs;
  const rows = await db
    .select()
    .from(instances)
    .where(
      and(
        eq(instances.agentId, agentId),
        isNull(instances.goneAt),
        or(
          and(isNotNull(instances.expectedState), lt(instances.expectedUntil, now)),
          and(inArray(instances.state, [...LOADING_STATES]), lt(instances.stateAt, stuckBefore), or(isNull(instances.expectedUntil), lt(instances.expectedUntil, now))),
        ),
      ),
    );
  const raised: string[] = [];
  for (const row of rows) {
    const stuck = (LOADING_STATES as readonly string[]).includes(row.state) && row.stateAt < stuckBefore;
    const unmet = row.expectedState !== null && row.expectedState !== row.state;
    if (stuck) await raiseStuck(deps, row, now);
    else if (unmet) await raiseUnmet(deps, row);
    if (row.expectedState !== null) {
      await db
        .update(instances)
        .set({ expectedState: null, expectedUntil: null })
        .where(and(eq(instances.agentId, agentId), eq(instances.id, row.id), eq(instances.expectedUntil, row.expectedUntil!)));
    }
    if (stuck || unmet) raised.push(row.id);
  }
  return raised;
}

function raiseStuck(deps: Deps, row: Row, now: number) {
  const forS = Math.round((now - row.stateAt) / 1000);
  return ingestEvent(deps, {
    agentId: row.agentId,
    source: "overdue",
    priority: 1,
    dedupKey: `overdue:${row.id}:${row.state}:${row.stateAt}`,
    payload: {
      instanceId: row.id,
      state: row.state,
      overdue: "loading",
      since: new Date(row.stateAt).toISOString(),
      forS,
      message: `${row.state} for ${forS}s, longer than LOADING_TIMEOUT_S (${deps.config.loadingTimeoutMs / 1000}s)`,
    },
  });
}

function raiseUnmet(deps: Deps, row: Row) {
  return ingestEvent(deps, {
    agentId: row.agentId,
    source: "overdue",
    priority: 1,
    dedupKey: `overdue:${row.id}:expected:${row.expectedUntil}`,
    payload: {
      instanceId: row.id,
      state: row.state,
      overdue: "expectation",
      expectedState: row.expectedState,
      expectedBy: new Date(row.expectedUntil!).toISOString(),
      message: `expected ${row.expectedState} by ${new Date(row.expectedUntil!).toISOString()} after the agent's action; it is ${row.state}`,
    },
  });
}

export const checkOverdueStates: TickCheck = async function checkOverdueStates(deps, agentId) {
  const raised = await raiseOverdueStates(deps, agentId);
  if (raised.length) deps.log.info("instances overdue", { agentId, instances: raised });
};
