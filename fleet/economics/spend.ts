/**
 * Estimated spend (issue 21, part 3): each instance's price × the time it spends in each billed
 * state, accrued per instance per UTC day into `instance_spend`, and what the API, the tools,
 * the spend gate and the budget notices read back. It is an ESTIMATE, not the provider's bill:
 * the rate applied to an interval is the instance's state and prices as last recorded at the
 * tick that accrues it (every ACCRUE_EVERY_MS, 5 minutes: a state change is priced late by up to that),
 * bandwidth is not counted, and accrual starts at the state change fleetwarden first saw (at most
 * ACCRUE_EVERY_MS before the first accrual).
 *
 * What is billed (the rule lives in fleet/economics/instance-cost.ts), from Vast.ai's billing help (https://docs.vast.ai/billing-help, "How does
 * pricing work?"): the active rental cost "for every second your instance is in the
 * active/connected state", and storage "for every second your instance exists" — "even stopped
 * instances have storage charges". Vast's `dph_total` (our pricePerHour) already includes storage.
 * So: a rented state (the GPU is held: running, loading, rebooting, exited — the contract stays
 * active until stopped — frozen, and unknown, counted as rented to err on the side of spending)
 * costs pricePerHour; any other state of an instance that still exists (stopped, created,
 * offline) costs storagePerHour (0 when unknown); a gone instance costs nothing.
 *
 * Accrual is two statements per agent in the tick's write batch, each guarded by the
 * `spend_accrued_at` read in the snapshot (compare-and-set), so two ticks never add the same
 * interval twice.
 */
import { and, eq, gte, isNull, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import type { TickStatement } from "../../pipeline/index.ts";
import { instanceSpend, instances } from "../../schema/index.ts";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../runtime/time.ts";
import { costPerHour } from "./instance-cost.ts";

/** Time further back than this is not accrued (a host down for weeks): the report shows 7 days. */
export const MAX_ACCRUAL_MS = 8 * DAY_MS;
export const SPEND_DAYS = 7;
/** How often a tick accrues an instance's spend: what is not yet accrued is at most this old. */
export const ACCRUE_EVERY_MS = 5 * MINUTE_MS;

export interface RateInputs {
  state: string;
  pricePerHour: number | null;
  storagePerHour: number | null;
  goneAt?: number | null;
}

/** USD per hour the instance costs in its current state (fleet/economics/instance-cost.ts; 0 when unknown). */
export function ratePerHour(row: RateInputs): number {
  return costPerHour(row) ?? 0;
}

/** YYYY-MM-DD (UTC) of a ms epoch. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export interface AccrualInputs extends RateInputs {
  id: string;
  stateAt: number;
  spendAccruedAt: number | null;
}

export interface SpendPart {
  instanceId: string;
  day: string;
  usd: number;
  /** The spend_accrued_at it was computed from: it is written only if that is still the row's. */
  fromAt: number | null;
}

export interface AccrualPlan {
  parts: SpendPart[];
  /** Every instance whose accrual moves to `now`, with the value it moves from. */
  moves: { instanceId: string; fromAt: number | null }[];
}

/**
 * What accruing up to `now` adds: each instance's rate over (spendAccruedAt, now], split at UTC
 * midnights. An instance accrued less than `everyMs` ago waits (a write per instance per minute
 * would be most of a quiet agent's database writes). One never accrued starts at its state
 * change, at most `everyMs` back (so a new sighting waits like the others, and an instance known
 * before spend was tracked is not charged for its past).
 */
export function planAccrual(rows: readonly AccrualInputs[], now: number, everyMs = ACCRUE_EVERY_MS): AccrualPlan {
  const plan: AccrualPlan = { parts: [], moves: [] };
  const every = Math.max(everyMs, 1);
  for (const row of rows) {
    const from = row.spendAccruedAt ?? Math.max(row.stateAt, now - every);
    if (now - from < every) continue;
    plan.moves.push({ instanceId: row.id, fromAt: row.spendAccruedAt });
    const rate = ratePerHour(row);
    if (rate <= 0) continue;
    let at = Math.max(from, now - MAX_ACCRUAL_MS);
    while (at < now) {
      const midnight = (Math.floor(at / DAY_MS) + 1) * DAY_MS;
      const until = Math.min(midnight, now);
      plan.parts.push({ instanceId: row.id, day: utcDay(at), usd: (rate * (until - at)) / HOUR_MS, fromAt: row.spendAccruedAt });
      at = until;
    }
  }
  return plan;
}

/** The plan as statements for the tick's write batch: add the parts, then move each instance's mark. */
export function accrualStatements(deps: Pick<FleetDeps, "db">, agentId: string, plan: AccrualPlan, now: number): TickStatement[] {
  const { db } = deps;
  const statements: TickStatement[] = [];
  if (plan.parts.length) {
    const values = sql.join(
      plan.parts.map((p) => sql`(${p.instanceId}, ${p.day}, ${p.usd}, ${p.fromAt})`),
      sql`, `,
    );
    statements.push(
      db.run(sql`with v(instance_id, day, usd, from_at) as (values ${values})
        insert into ${instanceSpend} (agent_id, instance_id, day, usd)
        select ${agentId}, v.instance_id, v.day, v.usd from v
          join ${instances} i on i.agent_id = ${agentId} and i.id = v.instance_id and i.spend_accrued_at is v.from_at
        where true
        on conflict (agent_id, day, instance_id) do update set usd = usd + excluded.usd`),
    );
  }
  if (plan.moves.length) {
    const values = sql.join(
      plan.moves.map((m) => sql`(${m.instanceId}, ${m.fromAt})`),
      sql`, `,
    );
    statements.push(
      db.run(sql`with v(instance_id, from_at) as (values ${values})
        update ${instances} set spend_accrued_at = ${now}
        where agent_id = ${agentId} and id in (select instance_id from v)
          and spend_accrued_at is (select from_at from v where v.instance_id = ${instances}.id)`),
    );
  }
  return statements;
}

/** Today's (UTC) accrued spend of the agent, as a statement (for a batch) and as a read. */
export function spendTodayStatement(deps: Pick<FleetDeps, "db">, agentId: string, now: number) {
  return deps.db
    .select({ usd: sql<number>`coalesce(sum(${instanceSpend.usd}), 0)` })
    .from(instanceSpend)
    .where(and(eq(instanceSpend.agentId, agentId), eq(instanceSpend.day, utcDay(now))));
}

export async function spendToday(deps: Pick<FleetDeps, "db" | "clock">, agentId: string): Promise<number> {
  const [row] = await spendTodayStatement(deps, agentId, deps.clock.now());
  return Number(row?.usd ?? 0);
}

/** Days from `SPEND_DAYS - 1` days ago to today, oldest first. */
function lastDays(now: number): string[] {
  return Array.from({ length: SPEND_DAYS }, (_, i) => utcDay(now - (SPEND_DAYS - 1 - i) * DAY_MS));
}

/** GET /api/agents/:agent/spend: today against the limit, the current burn, 7 days, today per instance. */
export async function spendReport(deps: Pick<FleetDeps, "db" | "clock" | "config">, agentId: string) {
  const { db } = deps;
  const now = deps.clock.now();
  const days = lastDays(now);
  const [byDay, byInstance, fleet] = await db.batch([
    db
      .select({ day: instanceSpend.day, usd: sql<number>`sum(${instanceSpend.usd})` })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), gte(instanceSpend.day, days[0]!)))
      .groupBy(instanceSpend.day),
    db
      .select({ id: instanceSpend.instanceId, usd: instanceSpend.usd })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), eq(instanceSpend.day, utcDay(now))))
      .orderBy(instanceSpend.instanceId),
    db
      .select({ state: instances.state, pricePerHour: instances.pricePerHour, storagePerHour: instances.storagePerHour })
      .from(instances)
      .where(and(eq(instances.agentId, agentId), isNull(instances.goneAt))),
  ]);
  const usdOf = new Map(byDay.map((d) => [d.day, Number(d.usd)]));
  return {
    estimate: true,
    today: {
      usd: round(usdOf.get(utcDay(now)) ?? 0),
      limitUsd: deps.config.economics.spendLimitPerDayUsd,
      burnPerHour: round(fleet.reduce((sum, row) => sum + ratePerHour(row), 0)),
    },
    days: days.map((day) => ({ day, usd: round(usdOf.get(day) ?? 0) })),
    instances: byInstance.map((row) => ({ id: row.id, usdToday: round(Number(row.usd)) })),
  };
}

/** Today's spend per instance of the agent (the instances API's `spentTodayUsd`). */
export async function spentTodayByInstance(deps: Pick<FleetDeps, "db" | "clock">, agentId: string): Promise<Map<string, number>> {
  const rows = await deps.db
    .select({ id: instanceSpend.instanceId, usd: instanceSpend.usd })
    .from(instanceSpend)
    .where(and(eq(instanceSpend.agentId, agentId), eq(instanceSpend.day, utcDay(deps.clock.now()))));
  return new Map(rows.map((row) => [row.id, round(Number(row.usd))]));
}

/** Cents and a little more: an estimate shown to people. */
export function round(usd: number): number {
  return Math.round(usd * 10_000) / 10_000;
}

/** The instances API's rows with today's estimated spend of each (`spentTodayUsd`, 0 when none). */
export async function withSpentToday<T extends { id: string }>(deps: Pick<FleetDeps, "db" | "clock">, agentId: string, rows: readonly T[]) {
  const spent = await spentTodayByInstance(deps, agentId);
  return rows.map((row) => ({ ...row, spentTodayUsd: spent.get(row.id) ?? 0 }));
}
