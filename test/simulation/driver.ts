/**
 * The deterministic simulation of the trigger pipeline. One seed = one scenario: the real
 * pipeline code (ingest, requestRun, claim, finish, wakes, cron, reset) on a real in-memory libSQL
 * database, with a fake clock, a scheduler that delays, duplicates and reorders deliveries, runs
 * that interleave with everything, die mid-way or fail, and injected database and scheduler
 * faults. After every step it checks the invariants, and around every run request what the
 * debounce promises (debounce-checks.ts); now and then a burst phase lets events arrive while
 * earlier slots' deliveries land and runs finish, and bounds when each was first claimed. At the
 * end it lets the system settle without faults (poison drops told) and checks that nothing was lost.
 */
import { createClient } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { FakeClock } from "../support/fake-clock.ts";
import type { Deps } from "../../jobs/deps.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { DEFAULT_AGENT, ensureAgent } from "../../pipeline/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { resetSession } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createWake } from "../../pipeline/index.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { testConfig } from "../support/test-deps.ts";
import { faultyClient, type FaultSwitch } from "./faulty-client.ts";
import { Rng } from "./rng.ts";
import { SimScheduler, type Queued } from "./sim-scheduler.ts";
import { SimStep } from "./sim-step.ts";
import { SimModel } from "./sim-model.ts";
import { createAgentRunStep } from "../../agent/run-agent.ts";
import { buildPromptDraft } from "../../agent/prompt/prompt.ts";
import { checkInvariants, checkSettled } from "./invariants.ts";
import { checkCompaction, startingHistory, type CompactionRecord } from "./compaction-checks.ts";
import { judgeRequest, lateClaims, readSchedule, type Arrival } from "./debounce-checks.ts";

const flush = () => new Promise((resolve) => setImmediate(resolve));

export interface SimResult {
  seed: number;
  steps: number;
  runs: number;
  faults: number;
  llmRequests: number;
  /** LLM calls before which compaction had to act. */
  compactedCalls: number;
  /** LLM calls before which compaction summarised stored turns. */
  summarizedCalls: number;
  /** Events and wakes dropped as poison. */
  poisoned: number;
  /** Requests an already-scheduled run covered (absorbed by the debounce). */
  absorbed: number;
  violations: string[];
}

export type SimMode = "pipeline" | "agent";

/**
 * One seeded scenario. In `agent` mode each run is the real agent step with the simulated LLM
 * (tool calls, malformed calls, failures, slow answers) and a small context budget, so the
 * agent's guarantees are checked on every request as well.
 */
export async function simulate(seed: number, steps = 60, mode: SimMode = "pipeline"): Promise<SimResult> {
  const rng = new Rng(seed);
  const faults: FaultSwitch = { rate: rng.pick([0, 0.02, 0.08]), on: false, injected: 0 };
  const raw = createClient({ url: ":memory:" });
  const checkDb = openDatabase(raw);
  await applyMigrations(checkDb);
  const clock = new FakeClock();
  await ensureAgent(checkDb, DEFAULT_AGENT, clock.now());
  const config = testConfig({ RUN_LEASE_MS: "60000", CONTEXT_BUDGET_TOKENS: "5000", SIMULATOR_FAILURE_RATE: "0" });
  const scheduler = new SimScheduler(rng, faults);
  const model = mode === "agent" ? new SimModel(rng, clock, config.contextBudgetTokens, config.runLeaseMs) : null;
  const sim = new SimStep(rng, config.runLeaseMs, model ? createAgentRunStep() : null);
  // Some seeds fail often, so the same events are handed back until they are dropped as poison.
  sim.failureRate = rng.pick([0.1, 0.1, 0.4]);
  // Read as the agent reads it, through the connection without faults.
  if (model) sim.readHistory = async (context) => startingHistory(await buildPromptDraft({ ...context.deps, db: checkDb }, context));
  const deps: Deps = {
    db: openDatabase(faultyClient(raw, rng, faults)),
    clock,
    config,
    scheduler,
    provider: new SimulatorProvider(checkDb, clock),
    llm: model,
    runStep: sim.step,
    log: silentLogger,
  };
  const violations: string[] = [];
  /** The delivery promise of each run waiting at its gate; it settles after the run's finish. */
  const finishes = new Map<number, Promise<unknown>>();
  /** When each run's gate was opened and its delivery settled. */
  const finishedAt = new Map<number, number>();
  let eventCounter = 0;
  let absorbed = 0;

  /** Runs `request` (a run request for `target`) and judges what it did to the schedule. */
  async function judged<T>(what: string, target: number, request: () => Promise<T>, scheduled: (result: T) => boolean): Promise<T> {
    const before = await readSchedule(raw, DEFAULT_AGENT);
    const result = await request();
    const after = await readSchedule(raw, DEFAULT_AGENT);
    if (before.nextRunAt !== null && before.nextRunAt <= target) absorbed++;
    violations.push(...judgeRequest(what, before, after, target, scheduled(result)));
    return result;
  }

  /** Delivers one queued item; a run that claims stays in flight at its gate. */
  async function deliver(item: Queued, duplicate: boolean) {
    if (!duplicate) scheduler.remove(item);
    const { body } = item.request;
    if (body.type === "wake") {
      // A due wake requests a run at its due time, no window: judged like an ingest's request for that time.
      const [wake] = (await raw.execute({ sql: "select due_at from wakes where id = ?", args: [body.wakeId] })).rows;
      const target = wake ? Number(wake.due_at) : clock.now();
      await judged(
        `the delivery of wake ${body.wakeId}`,
        target,
        () => handleDelivery(deps, body).catch(() => redeliver(item)),
        (handled) => handled === "requested",
      );
      return;
    }
    const runsBefore = sim.runs.length;
    const handled = handleDelivery(deps, body).catch(() => redeliver(item));
    await flush();
    if (sim.runs.length > runsBefore) finishes.set(sim.runs[sim.runs.length - 1]!.runId, handled);
    else await handled;
  }

  /** At-least-once: the scheduler offers a failed delivery again later. */
  function redeliver(item: Queued) {
    scheduler.queue.push({ request: item.request, availableAt: clock.now() + rng.int(500, 5000) });
  }

  /** Opens one waiting run's gate and waits for its finish, checking a no-op run publishes nothing. */
  async function finishOne() {
    const run = rng.pick(sim.waiting());
    const [agent] = await checkDb.$client.execute("select next_run_at from agents where id = 'default'").then((r) => r.rows);
    const publishesBefore = scheduler.publishes;
    const ranFaultFree = !faults.on;
    run.open!();
    await finishes.get(run.runId);
    finishes.delete(run.runId);
    finishedAt.set(run.runId, clock.now());
    const [row] = (
      await raw.execute({
        sql: "select status, noop, compaction, session_epoch from runs where agent_id = 'default' and run_id = ?",
        args: [run.runId],
      })
    ).rows;
    if (run.history && typeof row?.compaction === "string") {
      const [session] = (
        await raw.execute({
          sql: "select summarized_through from sessions where agent_id = 'default' and epoch = ?",
          args: [row.session_epoch ?? -1],
        })
      ).rows;
      violations.push(
        ...checkCompaction(
          run.runId,
          run.history,
          JSON.parse(row.compaction) as CompactionRecord,
          Number(session?.summarized_through ?? 0),
        ),
      );
    }
    if (
      ranFaultFree &&
      row?.status === "succeeded" &&
      Number(row.noop) === 1 &&
      agent?.next_run_at === null &&
      scheduler.publishes !== publishesBefore
    ) {
      violations.push(`no-op run ${run.runId} published ${scheduler.publishes - publishesBefore} deliveries`);
    }
  }

  /** Ingests one event (a repeat of `dedupKey` when given), judging its run request. */
  const ingest = (source: "human" | "manual" | "webhook", dedupKey?: string) => {
    const priority = source === "webhook" ? 1 : 0;
    const target = clock.now() + (priority === 0 ? config.debounceHumanMs : config.debounceStateMs);
    const key = dedupKey ?? `${source}:${++eventCounter}`;
    return judged(
      `an ingest of ${key} at ${clock.now()}`,
      target,
      () =>
        ingestEvent(deps, { agentId: DEFAULT_AGENT, source, priority, dedupKey: key, payload: dedupKey ? {} : { n: eventCounter } }).catch(
          () => undefined,
        ),
      (ingested) => ingested?.duplicate === false,
    );
  };

  for (let step = 0; step < steps; step++) {
    faults.on = faults.rate > 0;
    const roll = rng.next();
    if (roll < 0.2) {
      for (let i = rng.int(1, 4); i > 0; i--) await ingest(rng.pick(["human", "manual", "webhook"] as const));
    } else if (roll < 0.27) {
      // a webhook retried by its sender: same dedup key
      if (eventCounter > 0) await ingest("webhook", `webhook:${rng.int(1, eventCounter)}`);
    } else if (roll < 0.32) {
      await createWake(deps, DEFAULT_AGENT, { dueAt: clock.now() + rng.int(0, 20_000), reason: "sim", createdByRun: null }).catch(
        () => undefined,
      );
    } else if (roll < 0.55) {
      const due = scheduler.due(clock.now());
      if (due.length) await deliver(rng.pick(due), rng.chance(0.15));
    } else if (roll < 0.62) {
      // a delivery arrives late
      const due = scheduler.due(clock.now());
      if (due.length) rng.pick(due).availableAt = clock.now() + rng.int(1000, 90_000);
    } else if (roll < 0.75) {
      clock.advance(rng.pick([100, 1000, 2000, 5000, 10_000, 30_000, 61_000]));
    } else if (roll < 0.85) {
      if (sim.waiting().length) {
        if (rng.chance(0.2))
          sim.waiting()[0]!.open = undefined; // the process died mid-run
        else await finishOne();
      }
    } else if (roll < 0.92) {
      await runCronTick(deps).catch(() => undefined);
    } else if (roll < 0.95) {
      await resetSession(deps, DEFAULT_AGENT).catch(() => undefined);
    } else {
      await burstPhase();
    }
    faults.on = false;
    violations.push(...sim.violations.splice(0), ...(model?.violations.splice(0) ?? []), ...(await checkInvariants(checkDb, sim)));
    if (violations.length) break;
  }

  /**
   * From a quiet system, without faults: a burst of events arriving over a few windows while the
   * deliveries of earlier slots land (as they come due, some twice) and runs finish at random.
   * The events of the first window are consumed by one run (plus at most one follow-up), and
   * every event is first claimed within its bound (debounce-checks.ts).
   */
  async function burstPhase() {
    faults.on = false;
    await settle();
    sim.calm = true;
    const firstWindowEnd = clock.now() + Math.min(config.debounceHumanMs, config.debounceStateMs);
    const firstWindow = new Set<number>();
    const arrivals: Arrival[] = [];
    let slack = 0;
    for (let i = rng.int(2, 8); i > 0; i--) {
      const source = rng.pick(["human", "webhook"] as const);
      const { leaseRunId } = await readSchedule(raw, DEFAULT_AGENT);
      const at = clock.now();
      const ingested = await ingest(source);
      if (ingested && !ingested.duplicate) {
        arrivals.push({
          eventId: ingested.eventId,
          at,
          windowEnd: at + (source === "human" ? config.debounceHumanMs : config.debounceStateMs),
          inFlight: leaseRunId,
        });
        if (at < firstWindowEnd) firstWindow.add(ingested.eventId);
      }
      const step = rng.pick([0, 0, 20, 50, 300, 1000, 2500]);
      clock.advance(step);
      slack = Math.max(slack, step);
      for (let round = 0; round < 10 && scheduler.due(clock.now()).length; round++) {
        for (const item of scheduler.due(clock.now())) await deliver(item, rng.chance(0.1));
      }
      if (sim.waiting().length && rng.chance(0.4)) await finishOne();
    }
    await settle();
    sim.calm = false;
    const succeeded = new Set((await raw.execute("select run_id from runs where status = 'succeeded'")).rows.map((r) => Number(r.run_id)));
    const consuming = sim.runs.filter((r) => succeeded.has(r.runId) && r.eventIds.some((id) => firstWindow.has(id)));
    if (consuming.length < 1 || consuming.length > 2)
      violations.push(`a burst of ${firstWindow.size} events inside one window was consumed by ${consuming.length} runs`);
    violations.push(...lateClaims(arrivals, sim.runs, finishedAt, slack));
  }

  /** Without faults: finish live runs, let dead leases expire, deliver everything due, until quiet. */
  async function settle() {
    for (let round = 0; round < 500; round++) {
      if (sim.waiting().length) {
        await finishOne();
        continue;
      }
      const due = scheduler.due(clock.now());
      if (due.length) {
        await deliver(rng.pick(due), rng.chance(0.1));
        continue;
      }
      const agent = (await raw.execute("select lease_token, next_run_at from agents where id = 'default'")).rows[0]!;
      if (scheduler.queue.length === 0 && agent.lease_token === null && agent.next_run_at === null && (await nothingPending())) return;
      clock.advance(
        scheduler.queue.length ? Math.max(0, Math.min(...scheduler.queue.map((q) => q.availableAt)) - clock.now()) || 1000 : 61_000,
      );
      if (!scheduler.due(clock.now()).length) await runCronTick(deps).catch(() => undefined);
    }
    violations.push("the system did not settle");
  }

  /** No pending event, no due pending wake, and no poison drop the cron tick has yet to tell. */
  async function nothingPending() {
    const rs = await raw.execute({
      sql: `select (select count(*) from events where status = 'pending') + (select count(*) from wakes where status = 'pending' and due_at <= ?)
        + (select count(*) from (select 'event' as kind, id from events where drop_reason = 'poison' union all select 'wake', id from wakes where drop_reason = 'poison') p
           where not exists (select 1 from notifications n where n.dedup_key = 'poison:' || p.kind || ':' || p.id)) as n`,
      args: [clock.now()],
    });
    return Number(rs.rows[0]!.n) === 0;
  }

  if (!violations.length) {
    faults.on = false;
    await settle();
    violations.push(
      ...sim.violations.splice(0),
      ...(await checkInvariants(checkDb, sim)),
      ...(await checkSettled(checkDb, sim, clock.now(), config.maxEventAttempts)),
    );
  }
  violations.push(...(model?.violations ?? []));
  const compacted = await raw.execute(
    `select count(*) as n, sum(json_extract(call.value, '$.summarized') is not null) as summarized from runs, json_each(runs.compaction, '$.calls') as call
     where json_extract(call.value, '$.stubbedToolOutputs') > 0 or json_extract(call.value, '$.summarized') is not null
        or json_extract(call.value, '$.trimmedTurns') > 0 or json_extract(call.value, '$.droppedNoopTurns') > 0`,
  );
  const [poisoned] = (
    await raw.execute(
      "select (select count(*) from events where drop_reason = 'poison') + (select count(*) from wakes where drop_reason = 'poison') as n",
    )
  ).rows;
  raw.close();
  return {
    seed,
    steps,
    runs: sim.runs.length,
    faults: faults.injected,
    llmRequests: model?.requests ?? 0,
    compactedCalls: Number(compacted.rows[0]!.n),
    summarizedCalls: Number(compacted.rows[0]!.summarized ?? 0),
    poisoned: Number(poisoned!.n),
    absorbed,
    violations,
  };
}
