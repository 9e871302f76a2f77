/**
 * The stall check of the cron tick (issue 34, item 3): a running instance whose progress counter
 * has not moved for STALL_AFTER_S (fleet/instances/stall.ts decides) is told to a human once per
 * stall episode, naming the signal, and, when the agent's STALL_ACTION is `reboot` or `stop`,
 * that action is requested once per episode through executeAction (decided by `rules`, so the
 * action table, the audit and a human's rejection hold; filed as an approval, the caller asking
 * a human, unless STALL_ACTION_APPROVAL is false). It acts whoever decides the agent's runs (the
 * LLM or the rules policy), as the economics check does with idleness.
 *
 * What bounds it (all read in the tick snapshot):
 * - the episode is the time the counter last moved: notice once-mark `stall:<instance>:<progressMovedAt>`,
 *   action idempotency key `stall-<action>:<instance>:<progressMovedAt>`; the counter moving
 *   again (or a reset to a lower value, a restarted job) starts a new episode;
 * - at most STALLS_PER_TICK (20) instances are handled per tick (the snapshot's `limit`), oldest
 *   stall first; the rest wait for the next tick.
 */
import { and, asc, eq, isNotNull, isNull, lt, gte, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions, instances } from "../../schema/index.ts";
import { combineWrites, defineTickCheck } from "../../pipeline/index.ts";
import { onceKey, onceKeySql, onceMarked, onceNoticeStatements, type OnceNotice } from "../once-notices.ts";
import { executeAction } from "../actions/actions.ts";
import { stallSettings, stallState } from "./stall.ts";

/** The per-tick bound on stalled instances told or acted on. */
export const STALLS_PER_TICK = 20;

export interface StallReport {
  told: string[];
  acted: { instanceId: string; kind: string; status: string }[];
}

const actionKind = (config: FleetDeps["config"]) => (config.stall.action === "none" ? null : config.stall.action);

export const checkStalls = defineTickCheck({
  name: "checkStalls",
  reads(deps: FleetDeps, agentId: string, now: number) {
    const id = sql`${instances.id}`;
    const moved = sql`${instances.progressMovedAt}`;
    const kind = actionKind(deps.config);
    const told = onceMarked(agentId, onceKeySql("stall", id, moved));
    const acted = kind
      ? sql`exists (select 1 from ${actions} a where a.agent_id = ${agentId} and a.idempotency_key = ${onceKeySql(`stall-${kind}`, id, moved)})`
      : sql`1`;
    return {
      stalled: deps.db
        .select({
          id: instances.id,
          state: instances.state,
          progress: instances.progress,
          progressAt: instances.progressAt,
          progressMovedAt: instances.progressMovedAt,
          gpuUtil: instances.gpuUtil,
          gpuUtilAt: instances.gpuUtilAt,
          pricePerHour: instances.pricePerHour,
          told: sql<number>`${told}`,
          acted: sql<number>`${acted}`,
        })
        .from(instances)
        .where(
          and(
            eq(instances.agentId, agentId),
            isNull(instances.goneAt),
            eq(instances.state, "running"),
            isNotNull(instances.progress),
            lt(instances.progressMovedAt, now - deps.config.stall.afterMs),
            gte(instances.progressAt, now - deps.config.economics.telemetryStaleMs),
            sql`(not ${told} or not ${acted})`,
          ),
        )
        .orderBy(asc(instances.progressMovedAt), asc(instances.id))
        .limit(STALLS_PER_TICK),
    };
  },
  decide(deps, agentId, rows, tick) {
    const settings = stallSettings(deps.config);
    const kind = actionKind(deps.config);
    const notices: OnceNotice[] = [];
    const toAct: { id: string; movedAt: number; signal: string }[] = [];
    // Reconciliation recorded these in this tick; the rows here predate it, so judge them next tick.
    for (const row of rows.stalled.filter((r) => !tick.reconciled.has(r.id))) {
      const stall = stallState(row, tick.now, settings);
      if (!stall.stalled) continue;
      const movedAt = row.progressMovedAt!;
      if (!row.told) {
        const cost = row.pricePerHour !== null ? ` It costs $${row.pricePerHour.toFixed(2)}/hour while running.` : "";
        const next = kind
          ? ` STALL_ACTION is ${kind}${deps.config.stall.approval ? " (asked as an approval)" : ""}.`
          : " STALL_ACTION is none: nothing is done to it.";
        notices.push({
          key: onceKey("stall", row.id, movedAt),
          title: `Instance ${row.id} is stalled`,
          body: `${row.id} is running but its progress has stopped (${stall.kind === "hang" ? "likely a hang" : stall.kind === "idle" ? "GPU idle" : "no GPU reading"}): ${stall.signal}.${cost}${next}`,
          severity: "warning",
          instanceId: row.id,
        });
      }
      if (kind && !row.acted) toAct.push({ id: row.id, movedAt, signal: stall.signal });
    }
    const sent = combineWrites(notices.map((notice) => onceNoticeStatements(deps, agentId, notice)));
    return {
      statements: sent.statements,
      async after(results): Promise<StallReport> {
        await sent.after(results);
        const report: StallReport = { told: notices.map((n) => n.instanceId!), acted: [] };
        for (const stalled of toAct) {
          report.acted.push({ instanceId: stalled.id, kind: kind!, status: await actOnStall(deps, agentId, kind!, stalled) });
        }
        if (notices.length || toAct.length) deps.log.info("stalled instances", { agentId, ...report });
        return report;
      },
    };
  },
});

/** The agent's STALL_ACTION on one stalled instance, keyed by its episode; a throw is logged, never raised. */
async function actOnStall(
  deps: FleetDeps,
  agentId: string,
  kind: "reboot" | "stop",
  stalled: { id: string; movedAt: number; signal: string },
): Promise<string> {
  const reason = `stalled: ${stalled.signal} (STALL_ACTION=${kind})`;
  try {
    const result = await executeAction(deps, {
      agentId,
      runId: null,
      instanceId: stalled.id,
      kind,
      decidedBy: "rules",
      idempotencyKey: onceKey(`stall-${kind}`, stalled.id, stalled.movedAt),
      reason,
      ...(deps.config.stall.approval ? { askHuman: reason } : {}),
    });
    return result.status;
  } catch (err) {
    deps.log.error("the stall check could not act", { agentId, instanceId: stalled.id, kind, error: String(err) });
    return "failed";
  }
}
