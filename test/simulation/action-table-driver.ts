/**
 * The action-table simulation: one seed is a few simulated hours of a small fleet where every
 * action is asked for the way the product asks — the LLM through its tools (agent/tools, which
 * call executeAction), a rule straight through `executeAction`, an operator's own action, a
 * human deciding approvals — under a mode (act or shadow) and a daily spend limit drawn per seed,
 * with spend accruing, rejections, and runs whose input concerns some instances and not others.
 * The real pipeline claims and finishes each run; the run step stands in for the model and only
 * decides *what* to ask, so the table alone decides what happens. Every request is checked
 * (action-table-invariants.ts) against what the simulation knew when it asked.
 *
 * It uses executeAction's public shape only (ActionRequest → ActionResult), the tool dispatch
 * the model uses, decideApproval, and the provider, so it keeps checking whatever the table's
 * internals become.
 */
import { eq, sql } from "drizzle-orm";
import { approvals, instances, instanceSpend } from "../../schema/index.ts";
import { DEFAULT_AGENT, ensureAgent, ingestEvent } from "../../pipeline/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import type { ActionKind } from "../../fleet/actions/action-types.ts";
import { utcDay } from "../../fleet/economics/spend.ts";
import { runToolCall } from "../../agent/tools/index.ts";
import type { AgentRunStep, Deps } from "../../jobs/deps.ts";
import { createTestDb, RecordingScheduler, testConfig } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { deliverDue } from "../support/drive.ts";
import { CountingProvider } from "../actions/counting-provider.ts";
import type { Asker } from "./action-table-invariants.ts";
import { concernedBy, RequestObserver, type Exercised } from "./action-table-observer.ts";
import { Rng } from "./rng.ts";

const FLEET = ["sim-1", "sim-2", "sim-3", "sim-4"];
const KINDS: readonly Exclude<ActionKind, "label" | "replace" | "rent">[] = ["start", "start", "stop", "reboot", "reboot", "destroy"];
const TOOL = { start: "start_instance", stop: "stop_instance", reboot: "reboot_instance", destroy: "destroy_instance" } as const;
const COOLDOWN_S = 3600;

export interface ActionTableResult {
  seed: number;
  shadow: boolean;
  spendLimit: number | null;
  requests: number;
  exercised: Exercised;
  violations: string[];
}

export async function simulateActionTable(seed: number, steps = 40): Promise<ActionTableResult> {
  const rng = new Rng(seed);
  const db = await createTestDb();
  const clock = new FakeClock();
  await ensureAgent(db, DEFAULT_AGENT, clock.now());
  const shadow = rng.chance(0.4);
  const spendLimit = rng.pick([null, 1, 3]);
  const config = testConfig({
    AGENT_MODE: shadow ? "shadow" : "act",
    ...(spendLimit !== null ? { SPEND_LIMIT_PER_DAY_USD: String(spendLimit) } : {}),
    APPROVAL_REQUIRED_ACTIONS: "destroy",
    APPROVAL_REJECT_COOLDOWN_S: String(COOLDOWN_S),
    // The bounds are not what this simulation is about: wide, so the gates alone decide.
    LLM_ACTIONS_PER_RUN: "1000",
    ACTIONS_PER_HOUR: "10000",
    ACTION_RATE_LIMIT_PER_HOUR: "1000",
    APPROVALS_PER_RUN: "1000",
    APPROVALS_PER_HOUR: "10000",
    SIMULATOR_FAILURE_RATE: "0",
  });
  const provider = new CountingProvider(db, clock);
  await provider.inner.seed(FLEET.length);
  const now = clock.now();
  await db
    .insert(instances)
    .values(FLEET.map((id) => ({ agentId: DEFAULT_AGENT, id, state: "running", stateAt: now, lastSeenAt: now, updatedAt: now })));

  const observer = new RequestObserver({ db, clock, config, provider, shadow, spendLimit });
  const observe = observer.observe.bind(observer);

  // The run step stands in for the model and the rules: it only chooses what to ask.
  const step: AgentRunStep = async ({ deps, agentId, runId, fence, events, wakes }) => {
    const about = [...concernedBy(events)];
    let mutated = false;
    for (let i = rng.int(1, 3); i > 0; i--) {
      const asker: Asker = rng.chance(0.65) ? "llm" : "rules";
      const instanceId = about.length && rng.chance(0.5) ? rng.pick(about) : rng.pick(FLEET);
      const kind = rng.pick(KINDS);
      await observe(asker, kind, instanceId, events, async () => {
        if (asker === "llm") {
          const context = { deps, agentId, runId, toolCallId: `sim-${runId}-${i}`, fence, answering: { events, wakes } };
          const outcome = await runToolCall(
            context,
            TOOL[kind],
            JSON.stringify({ instance_id: instanceId, reason: "the simulation's model" }),
          );
          mutated ||= outcome.mutated;
          return /"status":"(\w+)"/.exec(outcome.content)?.[1] ?? outcome.content;
        }
        const key = `sim-rules:${runId}:${kind}:${instanceId}`;
        const result = await executeAction(deps, {
          agentId,
          runId,
          instanceId,
          kind,
          decidedBy: "rules",
          idempotencyKey: key,
          reason: "the simulation's rule",
          fence,
        });
        mutated ||= result.status === "succeeded" || result.status === "awaiting_approval";
        return result.status;
      });
    }
    return { decider: "llm", mutated, reply: null, promptTokens: 0, completionTokens: 0, contextTokens: 0, compaction: null };
  };

  const deps: Deps & { clock: FakeClock } = {
    db,
    clock,
    config,
    scheduler: new RecordingScheduler(),
    provider,
    llm: null,
    runStep: step,
    log: silentLogger,
  };
  let said = 0;
  let operatorActions = 0;

  for (let i = 0; i < steps && observer.violations.length === 0; i++) {
    const roll = rng.next();
    if (roll < 0.2) {
      const instanceId = rng.pick(FLEET);
      await ingestEvent(deps, {
        agentId: DEFAULT_AGENT,
        source: "webhook",
        priority: 1,
        dedupKey: `report:${i}`,
        payload: { instanceId, state: "exited" },
      });
    } else if (roll < 0.35) {
      const text = rng.chance(0.5) ? `please ${rng.pick(KINDS)} ${rng.pick(FLEET)}` : "how is it going?";
      await ingestEvent(deps, { agentId: DEFAULT_AGENT, source: "human", priority: 0, dedupKey: `chat:${++said}`, payload: { text } });
    } else if (roll < 0.55) {
      const pending = await db.select().from(approvals).where(eq(approvals.status, "pending"));
      if (pending.length) {
        const approval = rng.pick(pending);
        const decision = rng.chance(0.65) ? "reject" : "approve";
        let took = false;
        await observe("human", approval.kind, approval.instanceId ?? "", null, async () => {
          const decided = await decideApproval(deps, DEFAULT_AGENT, approval.id, decision, "the simulation's human", "sim-human");
          took = true;
          return decided.action?.status ?? decision;
        }).catch(() => undefined); // expired meanwhile: it decided nothing
        if (took) observer.decided(approval.instanceId ?? "", approval.kind, decision);
      }
    } else if (roll < 0.65) {
      const kind = rng.pick(KINDS);
      const instanceId = rng.pick(FLEET);
      await observe("human", kind, instanceId, null, async () => {
        const request = {
          agentId: DEFAULT_AGENT,
          runId: null,
          instanceId,
          kind,
          decidedBy: "human" as const,
          operator: "sim-operator",
          idempotencyKey: `sim-operator:${++operatorActions}`,
        };
        return (await executeAction(deps, { ...request, reason: "the operator's own" })).status;
      });
    } else if (roll < 0.8) {
      // The tick's accrual, as it would write it: today's spend grows.
      const row = { agentId: DEFAULT_AGENT, instanceId: rng.pick(FLEET), day: utcDay(clock.now()), usd: rng.pick([0.25, 0.5, 1]) };
      await db
        .insert(instanceSpend)
        .values(row)
        .onConflictDoUpdate({
          target: [instanceSpend.agentId, instanceSpend.day, instanceSpend.instanceId],
          set: { usd: sql`${instanceSpend.usd} + ${row.usd}` },
        });
    } else {
      clock.advance(rng.pick([60_000, 600_000, 1_800_000, 3_600_000]));
    }
    clock.advance(rng.pick([2_000, 10_000, 30_000]));
    await deliverDue(deps);
  }
  db.$client.close();
  return { seed, shadow, spendLimit, requests: observer.requests, exercised: observer.exercised, violations: observer.violations };
}
