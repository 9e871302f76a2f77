/**
 * The effects simulation (issue 9, invariants 8 and 9). One seed = one scenario: the real
 * pipeline and the real agent step on one libSQL file database opened through TWO connections,
 * deliveries handled on both at once, bursts of instance reports arriving while runs are claimed,
 * a seeded simulated fleet whose changes the cron tick's reconciliation reports back, a provider
 * that sometimes stalls past the lease (and the other connection re-claims meanwhile), runs that
 * fail before or after acting, and a misbehaving LLM (misbehaving-llm.ts). After every step it
 * checks effects-invariants.ts.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { FakeClock } from "../support/fake-clock.ts";
import type { Deps } from "../../jobs/deps.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { instances } from "../../schema/index.ts";
import { sql } from "drizzle-orm";
import { DEFAULT_AGENT, ensureAgent } from "../../pipeline/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { recoverDeadLease } from "../../pipeline/index.ts";
import type { RunFence } from "../../pipeline/index.ts";
import type { PublishRequest } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { createAgentRunStep } from "../../agent/run-agent.ts";
import { RecordingScheduler, testConfig } from "../support/test-deps.ts";
import { checkEffectInvariants } from "./effects-invariants.ts";
import { MisbehavingLlm } from "./misbehaving-llm.ts";
import { Rng } from "./rng.ts";
import type { AgentRunStep } from "../../jobs/deps.ts";

const FLEET = ["sim-1", "sim-2", "sim-3"];

export interface EffectsSimResult {
  seed: number;
  runs: number;
  lateAnswers: number;
  stalls: number;
  poisoned: number;
  /** Once-notices sent and idle stops or destroy requests made by the economics check. */
  economics: number;
  violations: string[];
}

export interface EffectsSimOptions {
  steps?: number;
}

export async function simulateEffects(seed: number, options: EffectsSimOptions = {}): Promise<EffectsSimResult> {
  const rng = new Rng(seed);
  const path = join(tmpdir(), `fleetwarden-effects-${process.pid}-${seed}.db`);
  const url = `file:${path}`;
  const rawA = createClient({ url });
  const rawB = createClient({ url });
  try {
    // A simulation needs no durability: no fsync per commit (WAL lets the two connections overlap).
    // Both connections live on one thread, so a connection waiting for the other's write lock
    // would block the very thread that must release it: a busy database fails at once instead,
    // and the delivery is offered again (at least once), as a failed Turso request would be.
    await rawA.execute("pragma journal_mode = wal");
    for (const raw of [rawA, rawB]) {
      await raw.execute("pragma synchronous = off");
      await raw.execute("pragma busy_timeout = 0");
    }
    const dbA = openDatabase(rawA);
    const dbB = openDatabase(rawB);
    await applyMigrations(dbA);
    const clock = new FakeClock();
    await ensureAgent(dbA, DEFAULT_AGENT, clock.now());
    const config = testConfig({
      RUN_LEASE_MS: "60000",
      SIMULATOR_FAILURE_RATE: "0",
      MAX_EVENT_ATTEMPTS: "3",
      ACTION_RATE_LIMIT_PER_HOUR: "1000",
      RECONCILE_INTERVAL_S: "1",
      MAX_PENDING_WAKES: "20",
      AGENT_MAX_ITERATIONS: "3",
      CONTEXT_BUDGET_TOKENS: "8000",
      // The economics rules act from the cron tick too: idle notices and stops, the budget notices
      // and the spend gate, destroy requests for instances stopped too long.
      IDLE_NOTIFY_AFTER_S: "60",
      IDLE_STOP_AFTER_S: "120",
      SPEND_LIMIT_PER_DAY_USD: "0.05",
      STOPPED_DESTROY_AFTER_S: "60",
    });
    const scheduler = new RecordingScheduler();
    const llm = new MisbehavingLlm(rng, clock, config.runLeaseMs, FLEET);
    const fences = new Map<number, RunFence>();
    const agent = createAgentRunStep();
    let runs = 0;
    let stalls = 0;
    let stalling = false;

    const step: AgentRunStep = async (context) => {
      runs++;
      fences.set(context.runId, context.fence);
      if (rng.chance(0.12)) throw new Error(`run ${context.runId} failed before deciding`);
      const outcome = await agent(context);
      if (rng.chance(0.08)) throw new Error(`run ${context.runId} failed after acting`);
      return outcome;
    };

    const simulator = new SimulatorProvider(dbA, clock, () => rng.next());
    await simulator.seed(FLEET.length);
    await dbA.insert(instances).values(
      FLEET.map((id) => ({
        agentId: DEFAULT_AGENT,
        id,
        state: "running",
        stateAt: clock.now(),
        lastSeenAt: clock.now(),
        updatedAt: clock.now(),
      })),
    );

    const base = { clock, config, scheduler, llm, runStep: step, log: silentLogger };
    const depsB: Deps = { ...base, db: dbB, provider: new SimulatorProvider(dbB, clock, () => rng.next()) };
    // Connection A's provider sometimes stalls past the lease; connection B re-claims meanwhile.
    const stallingProvider: Deps["provider"] = Object.assign(Object.create(simulator) as SimulatorProvider, {
      async reboot(id: string) {
        if (!stalling && rng.chance(0.25)) {
          stalling = true;
          stalls++;
          try {
            clock.advance(config.runLeaseMs + rng.int(1, 3000));
            await recoverDeadLease(depsB, DEFAULT_AGENT);
            await deliverDue(depsB);
          } finally {
            stalling = false;
          }
        }
        return simulator.reboot(id);
      },
    });
    const depsA: Deps = { ...base, db: dbA, provider: stallingProvider };

    async function deliver(deps: Deps, request: PublishRequest) {
      try {
        await handleDelivery(deps, request.body);
      } catch {
        // at-least-once: offered again later
        scheduler.published.push({ ...request, notBefore: clock.now() + 1000 });
      }
    }
    async function deliverDue(deps: Deps) {
      for (let round = 0; round < 10; round++) {
        const due = scheduler.takeDue(clock.now());
        if (due.length === 0) return;
        for (const request of due) await deliver(deps, request);
      }
    }
    // Every instance reports idle telemetry and a price, as fleet/instances/telemetry.ts would: the
    // economics check then spends, stops and asks on every tick (none of it may loop).
    const idleTelemetry = (deps: Deps) =>
      deps.db
        .update(instances)
        .set({
          gpuUtil: 0,
          gpuUtilAt: clock.now(),
          idleSince: sql`coalesce(${instances.idleSince}, ${clock.now()})`,
          telemetrySource: "simulator",
          pricePerHour: sql`coalesce(${instances.pricePerHour}, 1)`,
          storagePerHour: 0.1,
        })
        .catch(() => undefined); // refused while the other connection writes
    let reports = 0;
    const report = (deps: Deps) =>
      ingestEvent(deps, {
        agentId: DEFAULT_AGENT,
        source: "webhook",
        priority: 1,
        dedupKey: `report:${++reports}`,
        payload: { instanceId: rng.pick(FLEET), state: rng.pick(["exited", "running", "loading"]) },
      }).catch(() => undefined); // refused while the other connection writes: the sender retries later

    const violations: string[] = [];
    const steps = options.steps ?? 24;
    for (let i = 0; i < steps && violations.length === 0; i++) {
      const roll = rng.next();
      if (roll < 0.25) {
        // a burst of reports on B while A handles what is due
        const due = scheduler.takeDue(clock.now());
        await Promise.all([
          ...Array.from({ length: rng.int(1, 4) }, () => report(depsB)),
          ...due.slice(0, 1).map((d) => deliver(depsA, d)),
        ]);
        for (const rest of due.slice(1)) scheduler.published.push(rest);
      } else if (roll < 0.5) {
        // two deliveries at once, one per connection
        const due = scheduler.takeDue(clock.now());
        const [first, second, ...rest] = rng.chance(0.5) ? due : [...due].reverse();
        scheduler.published.push(...rest);
        await Promise.all([first ? deliver(depsA, first) : null, second ? deliver(depsB, second) : null]);
      } else if (roll < 0.65) {
        clock.advance(rng.pick([1000, 5000, 10_000, 30_000, 61_000]));
      } else if (roll < 0.75) {
        const ticking = rng.chance(0.5) ? depsA : depsB;
        await idleTelemetry(ticking);
        await runCronTick(ticking);
      } else if (roll < 0.85) {
        await ingestEvent(depsA, {
          agentId: DEFAULT_AGENT,
          source: "human",
          priority: 0,
          dedupKey: `chat:${i}`,
          payload: { text: "status?" },
        });
      } else {
        const next = Math.min(...scheduler.published.map((p) => p.notBefore));
        if (Number.isFinite(next) && next > clock.now()) clock.set(next);
      }
      violations.push(...(await checkEffectInvariants(rawA, fences, config.maxEventAttempts)));
    }
    const [poisoned] = (await rawA.execute("select count(*) as n from events where drop_reason = 'poison'")).rows;
    const [economics] = (
      await rawA.execute(
        "select (select count(*) from once_notices) + (select count(*) from actions where idempotency_key like 'idle-stop:%' or idempotency_key like 'stopped-destroy:%') as n",
      )
    ).rows;
    return {
      seed,
      runs,
      lateAnswers: llm.lateAnswers,
      stalls,
      poisoned: Number(poisoned?.n ?? 0),
      economics: Number(economics?.n ?? 0),
      violations,
    };
  } finally {
    rawA.close();
    rawB.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  }
}
