/**
 * The economics check of the cron tick (issue 21, parts 2–4): it accrues spend (fleet/economics/spend.ts),
 * tells a human when today's spend reaches 80 % and 100 % of the daily limit, when an instance
 * has been idle for IDLE_NOTIFY_AFTER_S, and when a rental's contract ends within EXPIRY_WARN_S;
 * it stops an instance idle for the agent's idleStopAfterS (through executeAction, decidedBy
 * `rules`, so an approval is filed when `stop` needs one), and asks a human to approve destroying
 * an instance stopped for longer than STOPPED_DESTROY_AFTER_S, stating its storage cost per day.
 *
 * What stops each from repeating (all read in the tick's snapshot, one statement per instance
 * set, so a quiet tick adds no round trip):
 * - budget notices: the once-marks `budget:<day>:80` and `budget:<day>:100` (once per UTC day);
 * - idle notice: the once-mark `idle:<instance>:<idleSince>` (once per idle episode; work resuming
 *   clears idleSince, so the next episode has a new key);
 * - expiry notice: the once-mark `expiry:<instance>:<endsAt>` (once per contract end);
 * - idle stop: the action's idempotency key `idle-stop:<instance>:<idleSince>` (one action, or one
 *   approval, per idle episode);
 * - destroy request: the action's idempotency key `stopped-destroy:<instance>:<stateAt>` (one
 *   approval request per stopped episode; a rejection blocks it further, fleet/actions/action-blocks.ts).
 * The notices commit with their once-marks in the tick's write batch (fleet/once-notices.ts); the
 * stop and the destroy request run after it, keyed as above, so a crash in between only means
 * the next tick does them.
 */
import { and, eq, gt, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions, instances, onceNotices } from "../../schema/index.ts";
import { combineWrites, defineTickCheck, type TickWrites } from "../../pipeline/index.ts";
import { accrualStatements, MAX_ACCRUAL_MS, planAccrual, ratePerHour, round, spendTodayStatement, utcDay } from "./spend.ts";
import { idleState } from "./idle.ts";
import { markStatement, onceKey, onceKeySql, onceMarked, onceNoticeStatements, type OnceNotice } from "../once-notices.ts";
import { executeAction } from "../actions/actions.ts";
import { iso } from "../../runtime/time.ts";
import type { ActionRequest } from "../actions/action-types.ts";

export const BUDGET_STEPS = [80, 100] as const;

function actionKeyed(agentId: string, key: ReturnType<typeof sql>) {
  return sql`exists (select 1 from ${actions} a where a.agent_id = ${agentId} and a.idempotency_key = ${key})`;
}

function economicsRows(deps: FleetDeps, agentId: string) {
  const id = sql`${instances.id}`;
  return deps.db
    .select({
      id: instances.id,
      state: instances.state,
      stateAt: instances.stateAt,
      pricePerHour: instances.pricePerHour,
      storagePerHour: instances.storagePerHour,
      spendAccruedAt: instances.spendAccruedAt,
      gpuUtil: instances.gpuUtil,
      gpuUtilAt: instances.gpuUtilAt,
      idleSince: instances.idleSince,
      telemetrySource: instances.telemetrySource,
      endsAt: instances.endsAt,
      idleTold: sql<number>`${onceMarked(agentId, onceKeySql("idle", id, sql`${instances.idleSince}`))}`,
      idleStopped: sql<number>`${actionKeyed(agentId, onceKeySql("idle-stop", id, sql`${instances.idleSince}`))}`,
      destroyAsked: sql<number>`${actionKeyed(agentId, onceKeySql("stopped-destroy", id, sql`${instances.stateAt}`))}`,
      expiryTold: sql<number>`${onceMarked(agentId, onceKeySql("expiry", id, sql`${instances.endsAt}`))}`,
    })
    .from(instances)
    .where(and(eq(instances.agentId, agentId), isNull(instances.goneAt)))
    .orderBy(instances.id);
}

/** Gone instances whose spend is not yet accrued up to when they went gone (fleet/economics/spend.ts closes them). */
function goneToClose(deps: FleetDeps, agentId: string, now: number) {
  return deps.db
    .select({
      id: instances.id,
      state: instances.state,
      stateAt: instances.stateAt,
      pricePerHour: instances.pricePerHour,
      storagePerHour: instances.storagePerHour,
      goneAt: instances.goneAt,
      spendAccruedAt: instances.spendAccruedAt,
    })
    .from(instances)
    .where(
      and(
        eq(instances.agentId, agentId),
        gt(instances.goneAt, now - MAX_ACCRUAL_MS),
        or(isNull(instances.spendAccruedAt), lt(instances.spendAccruedAt, instances.goneAt)),
      ),
    );
}

type EconomicsRow = Awaited<ReturnType<typeof economicsRows>>[number];

export interface EconomicsReport {
  /** Today's spend after this tick's accrual. */
  spendTodayUsd: number;
  notices: string[];
  stopped: { instanceId: string; status: string }[];
  destroyRequests: { instanceId: string; status: string }[];
}

/** A dollar figure for people. */
function usd(n: number): string {
  return `$${n.toFixed(2)}`;
}

export const checkEconomics = defineTickCheck({
  name: "checkEconomics",
  reads(deps: FleetDeps, agentId: string, now: number) {
    const day = utcDay(now);
    return {
      fleet: economicsRows(deps, agentId),
      today: spendTodayStatement(deps, agentId, now),
      closing: goneToClose(deps, agentId, now),
      budgetMarks: deps.db
        .select({ key: onceNotices.key })
        .from(onceNotices)
        .where(
          and(
            eq(onceNotices.agentId, agentId),
            inArray(
              onceNotices.key,
              BUDGET_STEPS.map((step) => onceKey("budget", day, step)),
            ),
          ),
        ),
    };
  },
  decide(deps, agentId, rows, tick): TickWrites<EconomicsReport> {
    const { now } = tick;
    const economics = deps.config.economics;
    const plan = planAccrual([...rows.fleet, ...rows.closing], now);
    // Already up to now: the accrual below only writes down what this read counted as unaccrued.
    const today = Number(rows.today[0]?.usd ?? 0);

    const notices: OnceNotice[] = [];
    const marksOnly: string[] = [];
    const limit = economics.spendLimitPerDayUsd;
    if (limit !== null) {
      const marked = new Set(rows.budgetMarks.map((m) => m.key));
      const reached = BUDGET_STEPS.filter((step) => today >= (limit * step) / 100);
      const top = reached.at(-1);
      for (const step of reached) {
        const key = onceKey("budget", utcDay(now), step);
        if (marked.has(key)) continue;
        if (step !== top) marksOnly.push(key);
        else notices.push(budgetNotice(key, step, today, limit, rows.fleet));
      }
    }

    const stops: EconomicsRow[] = [];
    const destroys: EconomicsRow[] = [];
    // Reconciliation recorded these in this tick; the rows here predate it, so judge them next tick.
    for (const row of rows.fleet.filter((r) => !tick.reconciled.has(r.id))) {
      const idle = idleState(row, now, economics);
      if (idle.idle && economics.idleNotifyAfterMs > 0 && idle.forMs >= economics.idleNotifyAfterMs && !row.idleTold) {
        notices.push({
          key: onceKey("idle", row.id, row.idleSince!),
          title: `Instance ${row.id} is idle`,
          body: `${row.id} has been idle: ${idle.signal}. It costs ${usd(ratePerHour(row))}/hour while running.`,
          severity: "warning",
          instanceId: row.id,
        });
      }
      if (idle.idle && economics.idleStopAfterMs > 0 && idle.forMs >= economics.idleStopAfterMs && !row.idleStopped) stops.push(row);
      if (
        row.state === "stopped" &&
        economics.stoppedDestroyAfterMs > 0 &&
        now - row.stateAt >= economics.stoppedDestroyAfterMs &&
        !row.destroyAsked
      )
        destroys.push(row);
      if (row.endsAt !== null && economics.expiryWarnMs > 0 && row.endsAt - now <= economics.expiryWarnMs && !row.expiryTold) {
        notices.push({
          key: onceKey("expiry", row.id, row.endsAt),
          title: `Rental of ${row.id} ends soon`,
          body: `The contract of ${row.id} ends at ${iso(row.endsAt)}${row.endsAt > now ? ` (in ${Math.round((row.endsAt - now) / 60_000)} min)` : " (already passed)"}; anything on it not saved elsewhere is lost then.`,
          severity: "warning",
          instanceId: row.id,
        });
      }
    }

    const sent = combineWrites(notices.map((notice) => onceNoticeStatements(deps, agentId, notice)));
    const statements = [
      ...accrualStatements(deps, agentId, plan, now),
      ...marksOnly.map((key) => markStatement(deps, agentId, key, now)),
      ...sent.statements,
    ];
    const offset = statements.length - sent.statements.length;
    return {
      statements,
      async after(results) {
        await sent.after(results.slice(offset));
        const report: EconomicsReport = {
          spendTodayUsd: round(today),
          notices: notices.map((n) => n.key),
          stopped: [],
          destroyRequests: [],
        };
        for (const row of stops) report.stopped.push({ instanceId: row.id, status: await stopIdle(deps, agentId, row, now) });
        for (const row of destroys)
          report.destroyRequests.push({ instanceId: row.id, status: await askToDestroy(deps, agentId, row, now) });
        if (notices.length || stops.length || destroys.length) deps.log.info("economics check acted", { agentId, ...report });
        return report;
      },
    };
  },
});

function budgetNotice(key: string, step: number, today: number, limit: number, fleet: readonly EconomicsRow[]): OnceNotice {
  const burn = fleet.reduce((sum, row) => sum + ratePerHour(row), 0);
  return {
    key,
    title: step >= 100 ? `Daily spend limit reached (${usd(limit)})` : `Daily spend at ${step} % of the limit`,
    body: `Estimated spend today is ${usd(today)} of the ${usd(limit)} daily limit (${Math.floor((today / limit) * 100)} %); the fleet burns ${usd(burn)}/hour now.${
      step >= 100 ? " Starting an instance now needs a human's approval." : ""
    }`,
    severity: step >= 100 ? "critical" : "warning",
  };
}

/** The tick's own action (no run, decided by rules), keyed by its episode; a throw is logged, never raised. */
async function actByRules(deps: FleetDeps, request: Omit<ActionRequest, "runId" | "decidedBy">): Promise<string> {
  try {
    return (await executeAction(deps, { ...request, runId: null, decidedBy: "rules" })).status;
  } catch (err) {
    deps.log.error("the economics check could not act", {
      agentId: request.agentId,
      instanceId: request.instanceId,
      kind: request.kind,
      error: String(err),
    });
    return "failed";
  }
}

/** Stops the idle instance once per idle episode (an approval when `stop` needs one). */
function stopIdle(deps: FleetDeps, agentId: string, row: EconomicsRow, now: number): Promise<string> {
  const idle = idleState(row, now, deps.config.economics);
  return actByRules(deps, {
    agentId,
    instanceId: row.id,
    kind: "stop",
    idempotencyKey: onceKey("idle-stop", row.id, row.idleSince!),
    reason: `idle for at least ${Math.round(deps.config.economics.idleStopAfterMs / 60_000)} min (${idle.signal}); it costs ${usd(ratePerHour(row))}/hour running`,
  });
}

/** Asks a human, once per stopped episode, to destroy an instance stopped too long. */
function askToDestroy(deps: FleetDeps, agentId: string, row: EconomicsRow, now: number): Promise<string> {
  const perDay = (row.storagePerHour ?? 0) * 24;
  const reason = `stopped since ${iso(row.stateAt)} (${Math.round((now - row.stateAt) / 3_600_000)} h); its storage costs ${usd(perDay)}/day${row.storagePerHour === null ? " (storage price unknown)" : ""}`;
  // This rule only ever proposes: the action table files an approval (a proposal in shadow mode).
  return actByRules(deps, {
    agentId,
    instanceId: row.id,
    kind: "destroy",
    idempotencyKey: onceKey("stopped-destroy", row.id, row.stateAt),
    reason,
    askHuman: reason,
  });
}
