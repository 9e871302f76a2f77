/**
 * Estimated spend (issue 21, part 3): each instance's price × the time it spends in each billed
 * state, accrued per instance per UTC day into `instance_spend`, and what the API, the tools,
 * the spend gate and the budget notices read back: accrued plus what has run since each
 * instance's last accrual (fleet/economics/unaccrued.ts), so every read is up to now (issue 33).
 * It is an ESTIMATE, not the provider's bill: the rate applied to an interval is the instance's
 * state and prices as last recorded at the tick that accrues it (every ACCRUE_EVERY_MS, 5
 * minutes: a state change is priced late by up to that), bandwidth is not counted, and accrual
 * starts at the state change fleetwarden first saw (at most ACCRUE_EVERY_MS before the first
 * accrual). A gone instance is accrued once more, up to when it went gone.
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
import { and, eq, gte, sql } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import type { TickStatement } from "../../pipeline/index.ts";
import { instanceSpend, instances } from "../../schema/index.ts";
import { DAY_MS } from "../../runtime/time.ts";
import { costPerHour } from "./instance-cost.ts";
import { ACCRUE_EVERY_MS, splitByDay, unaccrued, unaccruedTodaySql, type UnaccruedInputs } from "./unaccrued.ts";

export { ACCRUE_EVERY_MS, MAX_ACCRUAL_MS } from "./unaccrued.ts";
export const SPEND_DAYS = 7;

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

export interface AccrualInputs extends UnaccruedInputs {
  id: string;
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
  /** Every instance whose accrual mark moves (to `toAt`), with the value it moves from. */
  moves: { instanceId: string; fromAt: number | null; toAt: number }[];
}

/**
 * What accruing up to `now` adds: each instance's unaccrued stretch (fleet/economics/unaccrued.ts),
 * split at UTC midnights. An instance accrued less than `everyMs` ago waits (a write per instance
 * per minute would be most of a quiet agent's database writes); a gone one is closed at once (its
 * stretch ends when it went gone, and its mark then passes that end, so it is never read again).
 */
export function planAccrual(rows: readonly AccrualInputs[], now: number, everyMs = ACCRUE_EVERY_MS): AccrualPlan {
  const plan: AccrualPlan = { parts: [], moves: [] };
  const every = Math.max(everyMs, 1);
  for (const row of rows) {
    const stretch = unaccrued(row, now, every);
    const gone = row.goneAt !== null && row.goneAt !== undefined;
    if (!gone && row.spendAccruedAt === null) {
      // A new sighting: only its start is written down (a destroy later overwrites its state time).
      plan.moves.push({ instanceId: row.id, fromAt: null, toAt: stretch.from });
      continue;
    }
    if (gone ? row.spendAccruedAt !== null && row.spendAccruedAt >= row.goneAt! : now - stretch.from < every) continue;
    plan.moves.push({ instanceId: row.id, fromAt: row.spendAccruedAt, toAt: now });
    for (const part of splitByDay(stretch)) plan.parts.push({ instanceId: row.id, ...part, fromAt: row.spendAccruedAt });
  }
  return plan;
}

/** The plan as statements for the tick's write batch: add the parts, then move each instance's mark. */
export function accrualStatements(deps: Pick<FleetDeps, "db">, agentId: string, plan: AccrualPlan, _now?: number): TickStatement[] {
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
      plan.moves.map((m) => sql`(${m.instanceId}, ${m.fromAt}, ${m.toAt})`),
      sql`, `,
    );
    statements.push(
      // UPDATE … FROM: each instance found by its key from the list (one pass over it). Subqueries on
      // the list per instance row scanned the whole list for each: n² rows read (1,000 instances:
      // a million rows a tick, bench/turso-rows.bench.ts).
      db.run(sql`with v(instance_id, from_at, to_at) as (values ${values})
        update ${instances} set spend_accrued_at = v.to_at from v
        where ${instances}.agent_id = ${agentId} and ${instances}.id = v.instance_id
          and ${instances}.spend_accrued_at is v.from_at`),
    );
  }
  return statements;
}

/** Today's (UTC) spend of the agent up to `now` (accrued and not yet accrued), as a statement (for a batch) and as a read. */
export function spendTodayStatement(deps: Pick<FleetDeps, "db">, agentId: string, now: number) {
  return deps.db
    .select({ usd: sql<number>`coalesce(sum(${instanceSpend.usd}), 0) + ${unaccruedTodaySql(agentId, now)}` })
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

/** Each instance's spend not yet accrued, per UTC day (fleet/economics/unaccrued.ts). */
function unaccruedParts(rows: readonly (UnaccruedInputs & { id: string })[], now: number) {
  return rows.flatMap((row) => splitByDay(unaccrued(row, now)).map((part) => ({ id: row.id, ...part })));
}

/** The instance columns the unaccrued stretch is computed from: live instances and gone ones not yet closed. */
function unaccruedRows(deps: Pick<FleetDeps, "db">, agentId: string) {
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
    .where(eq(instances.agentId, agentId));
}

/** GET /api/agents/:agent/spend: today against the limit, the current burn, 7 days, today per instance, all up to now. */
export async function spendReport(deps: Pick<FleetDeps, "db" | "clock" | "config">, agentId: string) {
  const { db } = deps;
  const now = deps.clock.now();
  const days = lastDays(now);
  const today = utcDay(now);
  const [byDay, byInstance, fleet] = await db.batch([
    db
      .select({ day: instanceSpend.day, usd: sql<number>`sum(${instanceSpend.usd})` })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), gte(instanceSpend.day, days[0]!)))
      .groupBy(instanceSpend.day),
    db
      .select({ id: instanceSpend.instanceId, usd: instanceSpend.usd })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), eq(instanceSpend.day, today))),
    unaccruedRows(deps, agentId),
  ]);
  const usdOf = new Map(byDay.map((d) => [d.day, Number(d.usd)]));
  const usdOfInstance = new Map(byInstance.map((row) => [row.id, Number(row.usd)]));
  for (const part of unaccruedParts(fleet, now)) {
    usdOf.set(part.day, (usdOf.get(part.day) ?? 0) + part.usd);
    if (part.day === today) usdOfInstance.set(part.id, (usdOfInstance.get(part.id) ?? 0) + part.usd);
  }
  return {
    estimate: true,
    today: {
      usd: round(usdOf.get(today) ?? 0),
      limitUsd: deps.config.economics.spendLimitPerDayUsd,
      burnPerHour: round(fleet.reduce((sum, row) => sum + ratePerHour(row), 0)),
    },
    days: days.map((day) => ({ day, usd: round(usdOf.get(day) ?? 0) })),
    instances: [...usdOfInstance].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, usd]) => ({ id, usdToday: round(usd) })),
  };
}

/** Today's spend per instance of the agent up to now (the instances API's `spentTodayUsd`). */
export async function spentTodayByInstance(deps: Pick<FleetDeps, "db" | "clock">, agentId: string): Promise<Map<string, number>> {
  const now = deps.clock.now();
  const [rows, fleet] = await deps.db.batch([
    deps.db
      .select({ id: instanceSpend.instanceId, usd: instanceSpend.usd })
      .from(instanceSpend)
      .where(and(eq(instanceSpend.agentId, agentId), eq(instanceSpend.day, utcDay(now)))),
    unaccruedRows(deps, agentId),
  ]);
  const spent = new Map(rows.map((row) => [row.id, Number(row.usd)]));
  for (const part of unaccruedParts(fleet, now)) {
    if (part.day === utcDay(now)) spent.set(part.id, (spent.get(part.id) ?? 0) + part.usd);
  }
  return new Map([...spent].map(([id, usd]) => [id, round(usd)]));
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
