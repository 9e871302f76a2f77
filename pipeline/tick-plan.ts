/**
 * How one agent's tick spends its database round trips (issue 13's budget: provider pages + 5).
 * Every check of the tick names the rows it decides from; all of them are read in ONE batch (the
 * tick snapshot). Each check then decides from its rows, without reading again (reconciliation
 * alone reads its provider's pages and writes each page that changed in one batch), and answers
 * the statements it wants written; all checks' writes go out in ONE more batch, and only then are
 * deliveries published (after the rows that justify them are committed). A quiet tick is the
 * snapshot alone (plus the provider's pages when reconciliation is due).
 *
 * A snapshot statement may be a write when later reads must see it (freeing a dead lease before
 * the agent row is read; claiming reconciliation's interval): the batch is one transaction and
 * runs its statements in order. If the shared write batch fails, each check's writes are retried
 * in a batch of their own, so one check's failure never loses another's (their writes are keyed
 * by dedup keys and compare-and-set conditions, so a retry is harmless).
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { PipelineDeps } from "./deps.ts";
import { batchByName, type NamedResults, type NamedStatements } from "../db/named-batch.ts";
import { yieldToEventLoop } from "../runtime/yield.ts";

export type TickStatement = BatchItem<"sqlite">;

/** What a check wants written, and what it does once that is committed. */
export interface TickWrites<R> {
  statements: TickStatement[];
  /** Runs after the write batch committed, with this check's results in order; answers its report. */
  after(results: unknown[]): Promise<R> | R;
}

/** What the checks of one tick share. */
export interface TickContext {
  now: number;
  /**
   * Instances whose state reconciliation recorded in this tick. The checks after it decide from a
   * snapshot taken before, so they leave these alone; the next tick judges them on fresh rows.
   */
  reconciled: Set<string>;
}

/** A check of the tick; `D` is the ports it needs (the fleet's checks need the provider). */
export interface TickCheck<S extends NamedStatements = NamedStatements, R = unknown, D extends PipelineDeps = PipelineDeps> {
  /** Names the check in logs ("cron check failed"). */
  readonly name: string;
  /** The check's statements in the snapshot batch. */
  reads(deps: D, agentId: string, now: number): S;
  /** Decides from the snapshot rows; provider pages are the only round trips it may make. */
  decide(deps: D, agentId: string, rows: NamedResults<S>, tick: TickContext): Promise<TickWrites<R>> | TickWrites<R>;
}

/** Infers a check's types from its definition. */
export function defineTickCheck<S extends NamedStatements, R, D extends PipelineDeps = PipelineDeps>(
  check: TickCheck<S, R, D>,
): TickCheck<S, R, D> {
  return check;
}

/** A check of any shape, as the tick holds them (each check types its own snapshot rows). */
// biome-ignore lint/suspicious/noExplicitAny: the tick holds checks whose snapshot types differ; each check types its own rows
export type AnyTickCheck<D extends PipelineDeps = any> = TickCheck<any, unknown, D>;

export type CheckOutcome = { name: string; report: unknown } | { name: string; error: unknown };

/** A decision that writes nothing and answers `report`. */
export function writesNothing<R>(report: R): TickWrites<R> {
  return { statements: [], after: () => report };
}

/**
 * Runs the checks as one tick: one snapshot batch, their decisions, one write batch, their
 * `after` work. A check that throws is reported as failed and the others go on; a
 * failed snapshot fails the tick (nothing was decided from it).
 */
export async function runTickChecks<D extends PipelineDeps>(
  deps: D,
  agentId: string,
  checks: readonly AnyTickCheck<D>[],
): Promise<CheckOutcome[]> {
  const tick: TickContext = { now: deps.clock.now(), reconciled: new Set() };
  const failed = new Map<number, unknown>();
  const snapshot: NamedStatements = {};
  for (const [i, check] of checks.entries()) {
    for (const [name, statement] of Object.entries(check.reads(deps, agentId, tick.now) as NamedStatements))
      snapshot[`${i}.${name}`] = statement;
  }
  // A turn of the event loop before each batch: an embedded database answers synchronously, so a
  // chain of ticks (100 agents' deliveries, POST /api/cron) would otherwise hold the loop, and every
  // webhook waiting on it, from the first snapshot to the last write.
  await yieldToEventLoop();
  const rows = await batchByName(deps.db, snapshot);

  const plans = new Map<number, TickWrites<unknown>>();
  for (const [i, check] of checks.entries()) {
    const prefix = `${i}.`;
    const mine = Object.fromEntries(
      Object.entries(rows)
        .filter(([name]) => name.startsWith(prefix))
        .map(([name, r]) => [name.slice(prefix.length), r]),
    );
    try {
      plans.set(i, await check.decide(deps, agentId, mine, tick));
    } catch (err) {
      failed.set(i, err);
    }
  }

  await yieldToEventLoop();
  const results = await commitWrites(deps, plans, failed);
  const outcomes: CheckOutcome[] = [];
  for (const [i, check] of checks.entries()) {
    const plan = plans.get(i);
    if (failed.has(i) || !plan) {
      outcomes.push({ name: check.name, error: failed.get(i) });
      continue;
    }
    try {
      outcomes.push({ name: check.name, report: await plan.after(results.get(i) ?? []) });
    } catch (err) {
      outcomes.push({ name: check.name, error: err });
    }
  }
  return outcomes;
}

/** All plans' statements in one batch; on failure, each plan's alone (a failing one is marked failed). */
async function commitWrites(
  deps: PipelineDeps,
  plans: Map<number, TickWrites<unknown>>,
  failed: Map<number, unknown>,
): Promise<Map<number, unknown[]>> {
  const results = new Map<number, unknown[]>();
  const writing = [...plans].filter(([, plan]) => plan.statements.length > 0);
  if (!writing.length) return results;
  const batch = (statements: TickStatement[]) => deps.db.batch(statements as [TickStatement, ...TickStatement[]]) as Promise<unknown[]>;
  try {
    const all = await batch(writing.flatMap(([, plan]) => plan.statements));
    let offset = 0;
    for (const [i, plan] of writing) {
      results.set(i, all.slice(offset, offset + plan.statements.length));
      offset += plan.statements.length;
    }
    return results;
  } catch {
    // Nothing of the shared batch was committed: give each check its own.
    for (const [i, plan] of writing) {
      try {
        results.set(i, await batch(plan.statements));
      } catch (err) {
        failed.set(i, err);
      }
    }
    return results;
  }
}

/** Runs one check as a tick of its own (the checks' standalone entry points); its failure is thrown. */
export async function runTickCheck<R, D extends PipelineDeps>(
  deps: D,
  agentId: string,
  check: TickCheck<NamedStatements, R, D> | AnyTickCheck<D>,
): Promise<R> {
  const [outcome] = await runTickChecks(deps, agentId, [check as AnyTickCheck]);
  if (!outcome || "error" in outcome) throw outcome && "error" in outcome ? outcome.error : new Error(`${check.name} did not run`);
  return outcome.report as R;
}

/** Several decisions' writes as one: each part's `after` gets its own statements' results. */
export function combineWrites<R>(parts: readonly TickWrites<R>[]): TickWrites<R[]> {
  return {
    statements: parts.flatMap((part) => part.statements),
    async after(results) {
      const reports: R[] = [];
      let offset = 0;
      for (const part of parts) {
        reports.push(await part.after(results.slice(offset, offset + part.statements.length)));
        offset += part.statements.length;
      }
      return reports;
    },
  };
}
