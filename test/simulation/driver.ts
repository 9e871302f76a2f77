/**
 * The deterministic simulation of the trigger pipeline. One seed = one scenario: the real
 * pipeline code (ingest, requestRun, claim, finish, wakes, cron, reset) on a real in-memory libSQL
 * database, with a fake clock, a scheduler that delays, duplicates and reorders deliveries, runs
 * that interleave with everything, die mid-way or fail, and injected database and scheduler
 * faults. After every step it checks the invariants; at the end it lets the system settle
 * without faults and checks that nothing was lost.
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
import { SimulatorProvider } from "../../fleet/simulator.ts";
import { testConfig } from "../support/test-deps.ts";
import { faultyClient, type FaultSwitch } from "./faulty-client.ts";
import { Rng } from "./rng.ts";
import { SimScheduler, type Queued } from "./sim-scheduler.ts";
import { SimStep } from "./sim-step.ts";
import { SimModel } from "./sim-model.ts";
import { createAgentRunStep } from "../../agent/run-agent.ts";
import { checkInvariants, checkSettled } from "./invariants.ts";

const flush = () => new Promise((resolve) => setImmediate(resolve));

export interface SimResult {
  seed: number;
  steps: number;
  runs: number;
  faults: number;
  llmRequests: number;
  /** LLM calls before which compaction had to act. */
  compactedCalls: number;
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
  let eventCounter = 0;

  /** Delivers one queued item; a run that claims stays in flight at its gate. */
  async function deliver(item: Queued, duplicate: boolean) {
    if (!duplicate) scheduler.remove(item);
    const runsBefore = sim.runs.length;
    const handled = handleDelivery(deps, item.request.body).catch(() => {
      // at-least-once: the scheduler offers it again later
      scheduler.queue.push({ request: item.request, availableAt: clock.now() + rng.int(500, 5000) });
    });
    await flush();
    if (sim.runs.length > runsBefore) finishes.set(sim.runs[sim.runs.length - 1]!.runId, handled);
    else await handled;
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
    const [row] = (await raw.execute({ sql: "select status, noop from runs where agent_id = 'default' and run_id = ?", args: [run.runId] })).rows;
    if (ranFaultFree && row?.status === "succeeded" && Number(row.noop) === 1 && agent?.next_run_at === null && scheduler.publishes !== publishesBefore) {
      violations.push(`no-op run ${run.runId} published ${scheduler.publishes - publishesBefore} deliveries`);
    }
  }

  const ingest = (source: "human" | "manual" | "webhook") =>
    ingestEvent(deps, {
      agentId: DEFAULT_AGENT,
      source,
      priority: source === "webhook" ? 1 : 0,
      dedupKey: `${source}:${++eventCounter}`,
      payload: { n: eventCounter },
    }).catch(() => undefined);

  for (let step = 0; step < steps; step++) {
    faults.on = faults.rate > 0;
    const roll = rng.next();
    if (roll < 0.2) {
      for (let i = rng.int(1, 4); i > 0; i--) await ingest(rng.pick(["human", "manual", "webhook"] as const));
    } else if (roll < 0.27) {
      // a webhook retried by its sender: same dedup key
      if (eventCounter > 0) {
        await ingestEvent(deps, { agentId: DEFAULT_AGENT, source: "webhook", priority: 1, dedupKey: `webhook:${rng.int(1, eventCounter)}`, payload: {} }).catch(() => undefined);
      }
    } else if (roll < 0.32) {
      await createWake(deps, DEFAULT_AGENT, { dueAt: clock.now() + rng.int(0, 20_000), reason: "sim", createdByRun: null }).catch(() => undefined);
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
        if (rng.chance(0.2)) sim.waiting()[0]!.open = undefined; // the process died mid-run
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

  /** From a quiet system, a burst of events inside one window must give one run (plus at most one follow-up). */
  async function burstPhase() {
    faults.on = false;
    sim.calm = true;
    await settle();
    const burst = new Set<number>();
    for (let i = rng.int(2, 20); i > 0; i--) {
      const ingested = await ingest(rng.pick(["human", "webhook"] as const));
      if (ingested) burst.add(ingested.eventId);
      clock.advance(rng.int(0, 50));
    }
    await settle();
    sim.calm = false;
    const succeeded = new Set((await raw.execute("select run_id from runs where status = 'succeeded'")).rows.map((r) => Number(r.run_id)));
    const consuming = sim.runs.filter((r) => succeeded.has(r.runId) && r.eventIds.some((id) => burst.has(id)));
    if (consuming.length < 1 || consuming.length > 2) violations.push(`a burst of ${burst.size} events inside one window was consumed by ${consuming.length} runs`);
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
      clock.advance(scheduler.queue.length ? Math.max(0, Math.min(...scheduler.queue.map((q) => q.availableAt)) - clock.now()) || 1000 : 61_000);
      if (!scheduler.due(clock.now()).length) await runCronTick(deps).catch(() => undefined);
    }
    violations.push("the system did not settle");
  }

  async function nothingPending() {
    const rs = await raw.execute({
      sql: "select (select count(*) from events where status = 'pending') as events, (select count(*) from wakes where status = 'pending' and due_at <= ?) as wakes",
      args: [clock.now()],
    });
    return Number(rs.rows[0]!.events) === 0 && Number(rs.rows[0]!.wakes) === 0;
  }

  if (!violations.length) {
    faults.on = false;
    await settle();
    violations.push(...sim.violations.splice(0), ...(await checkInvariants(checkDb, sim)), ...(await checkSettled(checkDb, sim, clock.now())));
  }
  violations.push(...(model?.violations ?? []));
  const compacted = await raw.execute(
    `select count(*) as n from runs, json_each(runs.compaction, '$.calls') as call
     where json_extract(call.value, '$.stubbedToolOutputs') > 0 or json_extract(call.value, '$.summarized') is not null
        or json_extract(call.value, '$.trimmedTurns') > 0 or json_extract(call.value, '$.droppedNoopTurns') > 0`,
  );
  raw.close();
  return { seed, steps, runs: sim.runs.length, faults: faults.injected, llmRequests: model?.requests ?? 0, compactedCalls: Number(compacted.rows[0]!.n), violations };
}
