/**
 * Escalation, never silence (a cron check): an instance that does not get where it should
 * becomes one inbox event (source `overdue`, priority 1), so the agent or the rules policy acts
 * on it. Two ways to be overdue:
 * - an expectation left by the agent's own action (fleet/instances/expectations.ts) whose deadline passed
 *   with the instance not in the expected state;
 * - an instance in `created` or `loading` for longer than its loading timeout, action or not:
 *   LOADING_TIMEOUT_S, scaled down for dear rentals (`loadingTimeoutFor`: an instance over $1/h
 *   waits LOADING_TIMEOUT_S × $1/h ÷ its price, never under 5 minutes), and told with what it has
 *   cost so far at its full price (RunPod bills from provisioning, issue 33 item 8).
 * Each is keyed by what it is about (the instance's state time, or the expectation's deadline),
 * so a stuck instance is raised once per stuck state, not on every tick; a stuck instance that
 * was also expected to come up is raised once, as stuck.
 */
import { and, eq, inArray, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instances } from "../../schema/index.ts";
import type { IncomingEvent } from "../../pipeline/index.ts";
import { ingestWrites } from "../../pipeline/index.ts";
import { combineWrites, defineTickCheck } from "../../pipeline/index.ts";

/** States an instance should only pass through. */
export const LOADING_STATES = ["created", "loading"] as const;

/** The shortest loading timeout a dear rental is scaled down to. */
export const MIN_LOADING_TIMEOUT_MS = 5 * 60_000;

/** min(LOADING_TIMEOUT_S, max(300 s, LOADING_TIMEOUT_S × $1/h ÷ price/h)): a dear stuck rental is raised sooner. */
export function loadingTimeoutFor(baseMs: number, pricePerHour: number | null): number {
  if (pricePerHour === null || pricePerHour <= 1) return baseMs;
  return Math.min(baseMs, Math.max(MIN_LOADING_TIMEOUT_MS, baseMs / pricePerHour));
}

type Row = typeof instances.$inferSelect;

/** The tick's overdue check: candidates read in the snapshot, raised and cleared in the write batch. */
export const checkOverdueStates = defineTickCheck({
  name: "checkOverdueStates",
  reads(deps: FleetDeps, agentId: string, now: number) {
    // The shortest any instance's timeout can be; each row's own is applied in decide.
    const stuckBefore = now - Math.min(deps.config.loadingTimeoutMs, MIN_LOADING_TIMEOUT_MS);
    return {
      overdue: deps.db
        .select()
        .from(instances)
        .where(
          and(
            eq(instances.agentId, agentId),
            isNull(instances.goneAt),
            or(
              and(isNotNull(instances.expectedState), lt(instances.expectedUntil, now)),
              and(
                inArray(instances.state, [...LOADING_STATES]),
                lt(instances.stateAt, stuckBefore),
                or(isNull(instances.expectedUntil), lt(instances.expectedUntil, now)),
              ),
            ),
          ),
        ),
    };
  },
  decide(deps, agentId, rows, tick) {
    const { now } = tick;
    const raised: string[] = [];
    const parts = rows.overdue
      .filter((row) => !tick.reconciled.has(row.id))
      .flatMap((row) => {
        const timeoutMs = loadingTimeoutFor(deps.config.loadingTimeoutMs, row.pricePerHour);
        const stuck = (LOADING_STATES as readonly string[]).includes(row.state) && row.stateAt < now - timeoutMs;
        const unmet = row.expectedState !== null && row.expectedState !== row.state;
        if (stuck || unmet) raised.push(row.id);
        // The expectation is judged once: its deadline passed, so it is cleared either way.
        const clear =
          row.expectedState !== null
            ? [
                deps.db
                  .update(instances)
                  .set({ expectedState: null, expectedUntil: null })
                  .where(and(eq(instances.agentId, agentId), eq(instances.id, row.id), eq(instances.expectedUntil, row.expectedUntil!))),
              ]
            : [];
        if (stuck) return [ingestWrites(deps, stuckEvent(deps, row, now), clear)];
        if (unmet) return [ingestWrites(deps, unmetEvent(row), clear)];
        return clear.length ? [{ statements: clear, after: () => undefined }] : [];
      });
    const writes = combineWrites(parts);
    return {
      statements: writes.statements,
      async after(results) {
        await writes.after(results);
        if (raised.length) deps.log.info("instances overdue", { agentId, instances: raised });
        return raised;
      },
    };
  },
});

/**
 * What a stuck rental is told with: the timeout it passed and, when its price is known, what it
 * has cost so far at its full price (RunPod bills from provisioning; the spend estimate prices
 * `created` as storage only, so this errs high, as a warning should).
 */
export function stuckPast(
  row: Pick<Row, "stateAt" | "pricePerHour">,
  now: number,
  baseMs: number,
): { timeoutMs: number; costSoFarUsd: number | null; text: string } {
  const timeoutMs = loadingTimeoutFor(baseMs, row.pricePerHour);
  const costSoFarUsd = row.pricePerHour === null ? null : Math.round((row.pricePerHour * (now - row.stateAt)) / 36_000) / 100;
  const timeout =
    timeoutMs < baseMs
      ? `its loading timeout (${timeoutMs / 1000}s: LOADING_TIMEOUT_S ${baseMs / 1000}s scaled down for $${row.pricePerHour}/h)`
      : `LOADING_TIMEOUT_S (${baseMs / 1000}s)`;
  const cost =
    costSoFarUsd === null
      ? ""
      : `; it has cost about $${costSoFarUsd.toFixed(2)} so far at $${row.pricePerHour}/h (providers such as RunPod bill from provisioning)`;
  return { timeoutMs, costSoFarUsd, text: `longer than ${timeout}${cost}` };
}

function stuckEvent(deps: Pick<FleetDeps, "config">, row: Row, now: number): IncomingEvent {
  const forS = Math.round((now - row.stateAt) / 1000);
  const past = stuckPast(row, now, deps.config.loadingTimeoutMs);
  return {
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
      timeoutS: past.timeoutMs / 1000,
      costSoFarUsd: past.costSoFarUsd,
      message: `${row.state} for ${forS}s, ${past.text}`,
    },
  };
}

function unmetEvent(row: Row): IncomingEvent {
  return {
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
  };
}
