/**
 * One situation's world, in process: a fresh in-memory libSQL database, a fake clock, the
 * simulator as the provider, the real agent run step and the real pipeline driven through the
 * app's own routes (webhooks, chat, approvals, the simulator's failure route) and its cron tick,
 * the way test/support drives them. With an LLM configured (OPENAI_BASE_URL, OPENAI_API_KEY,
 * AGENT_MODEL) the model decides; without one, the rules policy does.
 */
import { and, eq } from "drizzle-orm";
import { buildApp } from "../functions/app.ts";
import { runCronTick } from "../jobs/tick.ts";
import { createAgentRunStep } from "../agent/run-agent.ts";
import { OpenAiChatModel } from "../agent/llm/openai-model.ts";
import { executeAction } from "../fleet/actions/actions.ts";
import { SimulatorProvider } from "../fleet/providers/simulator.ts";
import { approvals, simulatorInstances } from "../schema/index.ts";
import { MINUTE_MS } from "../runtime/time.ts";
import { authHeaders, createTestDb, createTestDeps, type TestDeps } from "../test/support/test-deps.ts";
import { deliverDue } from "../test/support/drive.ts";
import { FakeClock } from "../test/support/fake-clock.ts";
import { signedWebhook } from "../test/support/signed-webhook.ts";
import type { Situation, Step } from "./situation.ts";

/** Settings every situation runs with: no random failures, a real agent's timings otherwise. */
export const EVAL_VARS: Record<string, string> = { SIMULATOR_FAILURE_RATE: "0", LLM_MAX_RETRIES: "1", LLM_TIMEOUT_MS: "60000" };
/** Monday 2026-01-05 09:00 UTC: every situation starts at the same simulated time. */
export const EVAL_START = Date.UTC(2026, 0, 5, 9);

export interface World {
  deps: TestDeps;
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** Builds the world and takes the fleet in (the first tick and its run), so the situation starts quiet. */
export async function openWorld(situation: Situation, llmVars: Record<string, string>): Promise<World> {
  const db = await createTestDb();
  const clock = new FakeClock(EVAL_START);
  const provider = new SimulatorProvider(db, clock);
  await provider.seed(situation.instances ?? 2);
  const deps = await createTestDeps({
    db,
    clock,
    provider,
    runStep: createAgentRunStep(),
    vars: { ...EVAL_VARS, ...llmVars, ...situation.vars },
  });
  if (deps.config.llm) deps.llm = new OpenAiChatModel(deps.config.llm);
  const app = buildApp(() => deps);
  const world: World = { deps, request: async (path, init = {}) => app.request(path, { headers: authHeaders(), ...init }) };
  await wait(world, 60);
  return world;
}

let webhookCounter = 0;

export async function runStep(world: World, step: Step): Promise<void> {
  const { deps } = world;
  if ("wait" in step) return wait(world, step.wait);
  if ("fail" in step) await expectOk(world.request(`/api/simulator/instances/${step.fail}/fail`, post({ kind: step.kind })), step);
  else if ("report" in step) {
    const at = step.agoS ? { at: new Date(deps.clock.now() - step.agoS * 1000).toISOString() } : {};
    const body = {
      instanceId: step.report,
      state: step.state,
      ...(step.message ? { message: step.message } : {}),
      ...(step.progress !== undefined ? { progress: step.progress } : {}),
      ...(step.gpuUtil !== undefined ? { gpuUtil: step.gpuUtil } : {}),
      ...at,
    };
    await expectOk(buildApp(() => deps).request("/webhooks/default/instances", signedWebhook(`eval-${++webhookCounter}`, body)), step);
  } else if ("provider" in step) {
    await deps.db
      .update(simulatorInstances)
      .set({ ...step.set, updatedAt: deps.clock.now() })
      .where(eq(simulatorInstances.id, step.provider));
  } else if ("say" in step) await expectOk(world.request("/api/agents/default/messages", post({ text: step.say })), step);
  else if ("decide" in step) {
    const pending = await deps.db
      .select()
      .from(approvals)
      .where(and(eq(approvals.agentId, "default"), eq(approvals.status, "pending")));
    for (const a of pending)
      await expectOk(
        world.request(`/api/agents/default/approvals/${a.id}`, post({ decision: step.decide, ...(step.note ? { note: step.note } : {}) })),
        step,
      );
  } else {
    await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: step.instance,
      kind: step.file,
      decidedBy: "rules",
      idempotencyKey: `eval:setup:${step.file}:${step.instance}`,
      reason: "an earlier decision of the rules policy",
    });
  }
  await deliverDue(deps);
}

/** Time passes: a cron tick every simulated minute, and what falls due is delivered. */
async function wait(world: World, seconds: number): Promise<void> {
  const { deps } = world;
  for (let left = seconds * 1000; left > 0; left -= MINUTE_MS) {
    deps.clock.advance(Math.min(MINUTE_MS, left));
    await deliverDue(deps);
    await runCronTick(deps);
    await deliverDue(deps);
  }
}

const post = (body: unknown): RequestInit => ({ method: "POST", body: JSON.stringify(body) });

async function expectOk(response: Response | Promise<Response>, step: Step): Promise<void> {
  const res = await response;
  if (res.status >= 300) throw new Error(`eval step ${JSON.stringify(step)} was refused: ${res.status} ${await res.text()}`);
}
