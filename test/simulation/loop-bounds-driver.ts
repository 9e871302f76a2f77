/**
 * The effects simulation: one seed is a few simulated hours of a small fleet supervised by the
 * real agent (real pipeline, tools, rules, approvals, cron tick) on a real in-memory libSQL
 * database with a fake clock, driven by a misbehaving LLM (loop-bounds-model.ts). The provider
 * reports the effects of actions the way a real one does (loading, then running, by webhook, on
 * top of reconciliation); instances fail at random while nothing is expected of them; a human
 * rejects pending approvals and now and then writes in chat; the LLM has outages, during which
 * the rules policy decides (and its restarts, like destroys, need a human's approval, so a human
 * says no to them too). After every step the effect-loop invariants (loop-bounds-invariants.ts)
 * are checked.
 */
import { createClient } from "@libsql/client";
import { and, eq, isNull } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { FakeClock } from "../support/fake-clock.ts";
import type { Deps } from "../../jobs/deps.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { approvals, instances } from "../../schema/index.ts";
import { createAgentRunStep } from "../../agent/run-agent.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { injectSimulatorFailure } from "../../fleet/providers/simulator-reports.ts";
import { DEFAULT_AGENT, ensureAgent } from "../../pipeline/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { deliverDue } from "../support/drive.ts";
import { RecordingScheduler, testConfig } from "../support/test-deps.ts";
import { EffectsModel } from "./loop-bounds-model.ts";
import { checkEffectInvariants, type InjectedFailure } from "./loop-bounds-invariants.ts";
import { Rng } from "./rng.ts";

interface Report {
  at: number;
  instanceId: string;
  state: "loading" | "running";
  key: string;
}

/** The simulator, plus the webhooks a real instance sends after a start or reboot. */
class ReportingProvider extends SimulatorProvider {
  readonly reports: Report[] = [];
  private counter = 0;
  constructor(
    db: Db,
    private readonly fakeClock: FakeClock,
    random: () => number,
  ) {
    super(db, fakeClock, random);
  }
  override async start(id: string) {
    await super.start(id);
    this.comingUp(id);
  }
  override async reboot(id: string) {
    await super.reboot(id);
    this.comingUp(id);
  }
  private comingUp(instanceId: string) {
    const now = this.fakeClock.now();
    this.reports.push(
      { at: now + 5_000, instanceId, state: "loading", key: `report:${++this.counter}` },
      { at: now + 30_000, instanceId, state: "running", key: `report:${++this.counter}` },
    );
  }
}

export interface EffectsResult {
  seed: number;
  runs: number;
  /** Actions the agent decided, whatever became of them (taken, filed for approval, refused by a bound). */
  decided: number;
  /** Of those, the ones the provider carried out. */
  actions: number;
  rejections: number;
  /** Runs the rules policy decided while a rejection blocked an action. */
  rulesRunsInBlocks: number;
  violations: string[];
}

export const EFFECTS_VARS = {
  SIMULATOR_FAILURE_RATE: "0",
  APPROVAL_REJECT_COOLDOWN_S: "7200",
  WAKES_PER_HOUR: "12",
  WAKE_MIN_DELAY_S: "60",
  CONTEXT_BUDGET_TOKENS: "8000",
  RULES_MAX_RESTARTS_PER_HOUR: "3",
  APPROVAL_REQUIRED_ACTIONS: "start,destroy",
};

export async function simulateEffects(seed: number, steps = 80): Promise<EffectsResult> {
  const rng = new Rng(seed);
  const raw = createClient({ url: ":memory:" });
  const db = openDatabase(raw);
  await applyMigrations(db);
  const clock = new FakeClock();
  await ensureAgent(db, DEFAULT_AGENT, clock.now());
  const provider = new ReportingProvider(db, clock, () => rng.next());
  await provider.seed(4);
  const config = testConfig(EFFECTS_VARS);
  const llm = new EffectsModel(rng, ["sim-3", "sim-4"]);
  const deps: Deps & { clock: FakeClock } = {
    db,
    clock,
    config,
    scheduler: new RecordingScheduler(),
    provider,
    llm,
    runStep: createAgentRunStep(),
    log: silentLogger,
  };
  const violations: string[] = [];
  let lastTick = -Infinity;
  let rejections = 0;
  let messages = 0;
  const failures: InjectedFailure[] = [];

  for (let step = 0; step < steps && violations.length === 0; step++) {
    clock.advance(rng.pick([1_000, 5_000, 10_000, 30_000, 60_000, 120_000]));
    if (rng.chance(0.1)) llm.down = !llm.down;
    for (const report of provider.reports.filter((r) => r.at <= clock.now()).sort((a, b) => a.at - b.at)) {
      provider.reports.splice(provider.reports.indexOf(report), 1);
      await recordInstanceState(deps, {
        agentId: DEFAULT_AGENT,
        instanceId: report.instanceId,
        state: report.state,
        at: report.at,
        source: "webhook",
        dedupKey: report.key,
      });
    }
    if (clock.now() - lastTick >= 60_000) {
      lastTick = clock.now();
      await runCronTick(deps);
    }
    const roll = rng.next();
    if (roll < 0.1) {
      // fail an instance nothing is expected of, so every expected report is an echo
      const idle = await db
        .select({ id: instances.id })
        .from(instances)
        .where(
          and(
            eq(instances.agentId, DEFAULT_AGENT),
            eq(instances.state, "running"),
            isNull(instances.expectedState),
            isNull(instances.goneAt),
          ),
        );
      if (idle.length) {
        const instanceId = rng.pick(idle).id;
        failures.push({ instanceId, at: clock.now() });
        await injectSimulatorFailure(deps, instanceId, rng.pick(["exit", "stuck_loading"] as const));
      }
    } else if (roll < 0.3) {
      const pending = await db.select().from(approvals).where(eq(approvals.status, "pending"));
      if (pending.length) {
        await decideApproval(deps, DEFAULT_AGENT, rng.pick(pending).id, "reject", "no", "the simulated human");
        rejections++;
      }
    } else if (roll < 0.33) {
      await ingestEvent(deps, {
        agentId: DEFAULT_AGENT,
        source: "human",
        priority: 0,
        dedupKey: `chat:${++messages}`,
        payload: { text: "how is it going?" },
      });
    }
    await deliverDue(deps);
    violations.push(...(await checkEffectInvariants(raw, config, failures)));
  }
  if (violations.length && process.env.SIM_DEBUG) {
    for (const q of [
      "select id, run_id, kind, instance_id, decided_by, status, created_at from actions",
      "select id, source, status, drop_reason, run_id, payload, created_at from events",
      "select instance_id, from_state, to_state, source, at, created_at from instance_events",
    ]) {
      console.log((await raw.execute(q)).rows.map((r) => JSON.stringify(r)).join("\n"));
    }
  }
  const counts =
    await raw.execute(`select (select count(*) from runs) as runs, (select count(*) from actions where status = 'succeeded') as actions,
    (select count(*) from actions where decided_by <> 'human') as decided,
    (select count(*) from runs r where r.decider = 'rules' and exists (select 1 from action_blocks b where r.started_at >= b.rejected_at and r.started_at < b.until and b.lifted_at is null)) as rules_in_blocks`);
  raw.close();
  const [row] = counts.rows;
  return {
    seed,
    runs: Number(row!.runs),
    decided: Number(row!.decided),
    actions: Number(row!.actions),
    rejections,
    rulesRunsInBlocks: Number(row!.rules_in_blocks),
    violations,
  };
}
