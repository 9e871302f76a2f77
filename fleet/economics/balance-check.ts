/**
 * The provider account's credit balance (issue 33, item 7): the tick reads it (the provider's
 * optional `balance`, fleet/providers/account-balance.ts) and tells a human once when it covers
 * less than BALANCE_WARN_HOURS of the agent's current burn. RunPod stops every pod when the
 * balance runs out, so this is the last warning a renter gets.
 *
 * What bounds it:
 * - the read: at most once per BALANCE_READ_EVERY_MS (10 min) per agent, failures included (the
 *   agent's `provider_balances` row, schema/economics.ts, holds the last attempt in `attemptAt`);
 * - the warning: the once-mark (read in the tick snapshot; the reading, its attempt and the notice commit in one batch) `balance-low:<UTC day>:<hours>` (once per day and threshold); a
 *   reading back above the threshold removes today's mark, so a new drop is told again;
 * - a failed read is logged, never a warning, and leaves the last good reading in place.
 * The last good reading is the row's `usd` and `at` (when it was read), which the overview and
 * GET /spend show (jobs/read-models/balance.ts).
 */
import { and, eq, isNull } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { instances, onceNotices, providerBalances } from "../../schema/index.ts";
import { defineTickCheck, writesNothing } from "../../pipeline/index.ts";
import { MINUTE_MS } from "../../runtime/time.ts";
import { keyStartsWith, onceKey, onceNoticeStatements } from "../once-notices.ts";
import { ratePerHour, utcDay } from "./spend.ts";

/** The read bound: one balance call per agent (and so per provider account) per 10 minutes. */
export const BALANCE_READ_EVERY_MS = 10 * MINUTE_MS;

/** Where readings were kept before provider_balances (once_notices rows), removed by the next reading. */
const LEGACY_PREFIXES = ["balance-tried:", "balance-read:"] as const;

export type BalanceReport =
  | { status: "no balance API" | "read recently" }
  | { status: "read failed"; error: string }
  | { status: "read"; usd: number; burnPerHour: number; hoursLeft: number | null; told: boolean };

/** Hours the balance lasts at `burnPerHour` (null: nothing burns, it lasts). */
export function hoursLeft(usd: number, burnPerHour: number): number | null {
  if (burnPerHour <= 0) return null;
  return Math.max(0, usd) / burnPerHour;
}

export const checkBalance = defineTickCheck({
  name: "checkBalance",
  reads(deps: FleetDeps, agentId: string) {
    return {
      // The last attempt and any warning mark, in the tick's snapshot: a read then costs one batch.
      marks: deps.db
        .select({ key: onceNotices.key, at: onceNotices.at })
        .from(onceNotices)
        .where(and(eq(onceNotices.agentId, agentId), keyStartsWith("balance-low:"))),
      balance: deps.db
        .select({ attemptAt: providerBalances.attemptAt })
        .from(providerBalances)
        .where(eq(providerBalances.agentId, agentId)),
      fleet: deps.db
        .select({ state: instances.state, pricePerHour: instances.pricePerHour, storagePerHour: instances.storagePerHour })
        .from(instances)
        .where(and(eq(instances.agentId, agentId), isNull(instances.goneAt))),
    };
  },
  decide(deps, agentId, rows, tick) {
    const { provider } = deps;
    if (!provider.balance) return writesNothing<BalanceReport>({ status: "no balance API" });
    const last = rows.balance[0]?.attemptAt;
    if (last !== undefined && tick.now - last < BALANCE_READ_EVERY_MS) return writesNothing<BalanceReport>({ status: "read recently" });
    const burnPerHour = rows.fleet.reduce((sum, row) => sum + ratePerHour(row), 0);
    const marked = new Set(rows.marks.map((m) => m.key));
    return { statements: [], after: () => readAndTell(deps, agentId, tick.now, burnPerHour, marked) };
  },
});

async function readAndTell(
  deps: FleetDeps,
  agentId: string,
  now: number,
  burnPerHour: number,
  marked: ReadonlySet<string>,
): Promise<BalanceReport> {
  const kind = deps.provider.kind;
  const mine = eq(onceNotices.agentId, agentId);
  let usd: number;
  try {
    usd = await deps.provider.balance!();
  } catch (err) {
    // The attempt alone (the last good reading stays): a failing provider is still asked only once per bound.
    const error = String(err).slice(0, 500);
    await deps.db
      .insert(providerBalances)
      .values({ agentId, usd: null, at: null, attemptAt: now, error })
      .onConflictDoUpdate({ target: providerBalances.agentId, set: { attemptAt: now, error } });
    deps.log.error("could not read the provider's balance", { agentId, provider: kind, error: String(err) });
    return { status: "read failed", error: String(err) };
  }

  const warnHours = deps.config.economics.balanceWarnHours;
  const left = hoursLeft(usd, burnPerHour);
  const key = onceKey("balance-low", utcDay(now), warnHours);
  const low = warnHours > 0 && left !== null && left < warnHours;
  const notice =
    low && !marked.has(key)
      ? onceNoticeStatements(deps, agentId, {
          key,
          title: `${providerName(kind)} balance covers ${formatHours(left)}`,
          body: `The ${providerName(kind)} account's balance is $${usd.toFixed(2)}; the fleet burns $${burnPerHour.toFixed(2)}/hour, so it lasts about ${formatHours(left)} (warning below ${warnHours} h).${
            kind === "runpod" ? " RunPod stops every pod when the balance runs out." : ""
          } Add credit to keep the instances running.`,
          severity: left < warnHours / 4 ? "critical" : "warning",
        })
      : null;
  const statements = [
    deps.db
      .insert(providerBalances)
      .values({ agentId, usd, at: now, attemptAt: now, error: null })
      .onConflictDoUpdate({ target: providerBalances.agentId, set: { usd, at: now, attemptAt: now, error: null } }),
    ...LEGACY_PREFIXES.map((prefix) => deps.db.delete(onceNotices).where(and(mine, keyStartsWith(prefix)))),
    // Recovered (or nothing burns): a later drop today is told again.
    ...(!low && marked.has(key) ? [deps.db.delete(onceNotices).where(and(mine, eq(onceNotices.key, key)))] : []),
  ];
  // One batch: the reading, its attempt and the notice with its once-mark commit together.
  const results = await deps.db.batch([...statements, ...(notice?.statements ?? [])] as unknown as [(typeof statements)[number]]);
  if (notice) await notice.after(results.slice(statements.length) as never);
  const told = notice !== null;
  if (told) deps.log.info("balance check told a human", { agentId, usd, burnPerHour, hoursLeft: left });
  return { status: "read", usd, burnPerHour, hoursLeft: left, told };
}

function providerName(kind: string): string {
  return ({ vast: "Vast.ai", runpod: "RunPod", lambda: "Lambda Cloud", simulator: "simulated" } as Record<string, string>)[kind] ?? kind;
}

function formatHours(hours: number): string {
  return hours < 1 ? `${Math.round(hours * 60)} min` : `${hours.toFixed(1)} h`;
}
