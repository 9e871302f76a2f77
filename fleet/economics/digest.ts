/**
 * The daily digest (issue 36, item 7): one message per agent and UTC day, at DIGEST_HOUR_UTC,
 * saying what happened in the last 24 hours (runs, actions with and without a human), what it
 * cost (yesterday, today so far, the burn now), what fleetwarden saved (idle stops: the hours each
 * stopped instance has not been billed its compute, at the rate it then ran; failures it fixed:
 * restarts, reboots and replacements that succeeded without a human) and what waits for a human
 * (pending approvals, open watchdog conditions). One summary instead of a stream: everything in it
 * was told when it happened, so this is for the person who reads one message a day.
 *
 * Reads: one batch over indexed windows (runs_started, actions_created, approvals_status,
 * watchdog_conditions_agent) plus the spend report's own batch; called at most once a day per
 * agent (fleet/economics/digest-check.ts holds the bound).
 */
import { and, eq, gte, inArray, isNull } from "drizzle-orm";
import { actions, approvals, instances, runs, watchdogConditions } from "../../schema/index.ts";
import { DAY_MS, HOUR_MS } from "../../runtime/time.ts";
import type { FleetDeps } from "../deps.ts";
import { costPerHour } from "./instance-cost.ts";
import { spendReport, utcDay } from "./spend.ts";

export interface Digest {
  title: string;
  body: string;
  /** The figures the text is made of (tests and logs read them, not the words). */
  figures: {
    runs: number;
    actionsWithoutHuman: number;
    actionsByHumans: number;
    spentYesterdayUsd: number;
    spentTodayUsd: number;
    burnPerHour: number;
    idleHoursStopped: number;
    savedUsd: number;
    failuresFixed: number;
    pendingApprovals: number;
    openConditions: number;
  };
}

const FIXES = new Set(["start", "reboot", "replace"]);

type StopRow = {
  instanceId: string | null;
  at: number;
  state: string | null;
  stateAt: number | null;
  price: number | null;
  storage: number | null;
};

/** Hours an idle stop kept the compute unbilled (until now, or until the instance ran again) and what that saved. */
export function savedByStops(stops: readonly StopRow[], now: number): { hours: number; usd: number; instances: string[] } {
  let hours = 0;
  let usd = 0;
  const stopped = new Set<string>();
  for (const stop of stops) {
    if (!stop.instanceId || stop.state === null) continue;
    // Running again since: saved until it changed state; still down: saved until now.
    const until = stop.state === "running" && stop.stateAt !== null && stop.stateAt > stop.at ? stop.stateAt : now;
    const h = Math.max(0, until - stop.at) / HOUR_MS;
    const running = costPerHour({ state: "running", pricePerHour: stop.price, storagePerHour: stop.storage });
    const down = costPerHour({ state: "stopped", pricePerHour: stop.price, storagePerHour: stop.storage }) ?? 0;
    hours += h;
    usd += running === null ? 0 : Math.max(0, running - down) * h;
    stopped.add(stop.instanceId);
  }
  return { hours, usd, instances: [...stopped] };
}

export async function composeDigest(deps: Pick<FleetDeps, "db" | "clock" | "config">, agentId: string): Promise<Digest> {
  const { db } = deps;
  const now = deps.clock.now();
  const since = now - DAY_MS;
  const [runRows, actionRows, pending, conditions] = await db.batch([
    db
      .select({ status: runs.status })
      .from(runs)
      .where(and(eq(runs.agentId, agentId), gte(runs.startedAt, since))),
    db
      .select({
        kind: actions.kind,
        status: actions.status,
        decidedBy: actions.decidedBy,
        instanceId: actions.instanceId,
        at: actions.createdAt,
        state: instances.state,
        stateAt: instances.stateAt,
        price: instances.pricePerHour,
        storage: instances.storagePerHour,
      })
      .from(actions)
      .leftJoin(instances, and(eq(instances.agentId, actions.agentId), eq(instances.id, actions.instanceId)))
      .where(and(eq(actions.agentId, agentId), gte(actions.createdAt, since), inArray(actions.status, ["succeeded"]))),
    db
      .select({ kind: approvals.kind, instanceId: approvals.instanceId, createdAt: approvals.createdAt })
      .from(approvals)
      .where(and(eq(approvals.agentId, agentId), eq(approvals.status, "pending"))),
    db
      .select({ kind: watchdogConditions.kind })
      .from(watchdogConditions)
      .where(and(eq(watchdogConditions.agentId, agentId), isNull(watchdogConditions.clearedAt))),
  ]);
  const spend = await spendReport(deps, agentId);
  const yesterday = spend.days.find((d) => d.day === utcDay(now - DAY_MS))?.usd ?? 0;

  const byMachine = actionRows.filter((a) => a.decidedBy !== "human");
  const byHumans = actionRows.length - byMachine.length;
  const saved = savedByStops(
    byMachine.filter((a) => a.kind === "stop"),
    now,
  );
  const fixes = byMachine.filter((a) => FIXES.has(a.kind));
  const failedRuns = runRows.filter((r) => r.status === "failed" || r.status === "crashed").length;

  const figures: Digest["figures"] = {
    runs: runRows.length,
    actionsWithoutHuman: byMachine.length,
    actionsByHumans: byHumans,
    spentYesterdayUsd: yesterday,
    spentTodayUsd: spend.today.usd,
    burnPerHour: spend.today.burnPerHour,
    idleHoursStopped: Math.round(saved.hours * 10) / 10,
    savedUsd: Math.round(saved.usd * 100) / 100,
    failuresFixed: fixes.length,
    pendingApprovals: pending.length,
    openConditions: conditions.length,
  };
  const usd = (n: number) => `$${n.toFixed(2)}`;
  const oldest = pending.reduce<(typeof pending)[number] | undefined>((o, a) => (!o || a.createdAt < o.createdAt ? a : o), undefined);
  const lines = [
    `Last 24 hours: ${plural(runRows.length, "run")}${failedRuns ? ` (${failedRuns} failed)` : ""}; ${plural(byMachine.length, "action")} without a human, ${byHumans} by people.`,
    `Cost: ${usd(yesterday)} yesterday (UTC), ${usd(spend.today.usd)} today so far; burning ${usd(spend.today.burnPerHour)}/h now.`,
    saved.instances.length
      ? `Saved: ${figures.idleHoursStopped} idle GPU-hours not billed after stopping ${saved.instances.join(", ")}, about ${usd(figures.savedUsd)}.`
      : "Saved: no idle instance was stopped.",
    fixes.length
      ? `Fixed without a human: ${fixes.map((f) => `${f.instanceId ?? "?"} (${f.kind})`).join(", ")}.`
      : "Fixed without a human: nothing needed fixing.",
    pending.length || conditions.length
      ? `Waiting for a human: ${plural(pending.length, "approval")}${oldest ? ` (oldest: ${oldest.kind} ${oldest.instanceId ?? ""}, ${Math.round((now - oldest.createdAt) / HOUR_MS)} h old)` : ""}; ${plural(conditions.length, "watchdog condition")} open.`
      : "Nothing waits for a human.",
  ];
  return {
    title: `Daily digest: ${usd(spend.today.usd)} today, ${usd(figures.savedUsd)} saved, ${plural(pending.length, "approval")} waiting`,
    body: lines.join("\n"),
    figures,
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
