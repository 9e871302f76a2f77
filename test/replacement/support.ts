/**
 * The replacement tests' shared steps: a simulated fleet (rules policy, no LLM) whose sim-1 has
 * lost its host, the agent's run that proposes the replacement, a human's approval through the
 * approvals API, and the replacement check run as a tick of its own.
 */
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { approvals, replacements } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { checkReplacements, type ReplacementsReport } from "../../fleet/replacement/replacement-check.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { agentFixture, setInstanceState, trigger } from "../agent/harness.ts";

export const AFTER_S = 600;

export async function deadFleet(vars: Record<string, string> = {}) {
  const { deps } = await agentFixture({ vars: { REPLACE_AFTER_S: String(AFTER_S), SIMULATOR_FAILURE_RATE: "0", ...vars } });
  const sim = deps.provider as SimulatorProvider;
  await sim.injectFailure("sim-1", "host_offline");
  await setInstanceState(deps, "sim-1", "offline");
  return { deps, sim };
}

/** An event about sim-1 the rules policy answers (after `waitS` seconds offline). */
export async function ruleRun(deps: TestDeps, waitS = AFTER_S + 1) {
  deps.clock.advance(waitS * 1000);
  return trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "offline" } });
}

export const api = (deps: TestDeps, path: string, init: RequestInit = {}) =>
  buildApp(() => deps).request(path, { ...init, headers: { ...authHeaders(), ...(init.headers ?? {}) } });

export async function decide(deps: TestDeps, decision: "approve" | "reject") {
  const [approval] = await deps.db.select().from(approvals).where(eq(approvals.kind, "replace"));
  const res = await api(deps, `/api/agents/default/approvals/${approval!.id}`, { method: "POST", body: JSON.stringify({ decision }) });
  if (res.status !== 200) throw new Error(`decision answered ${res.status}: ${await res.text()}`);
  return approval!;
}

export const tick = (deps: TestDeps) => runTickCheck<ReplacementsReport, TestDeps>(deps, "default", checkReplacements);
export const rows = (deps: TestDeps) => deps.db.select().from(replacements).orderBy(replacements.id);
