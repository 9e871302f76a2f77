/**
 * The replacement tests' shared steps: a simulated fleet (rules policy, no LLM) whose sim-1 has
 * lost its host, the agent's run that proposes the replacement, a human's approval through the
 * approvals API, and the replacement check run as a tick of its own; and a dead instance on the
 * strict Vast.ai fake, past REPLACE_AFTER_S.
 */
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { approvals, replacements } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { checkReplacements, type ReplacementsReport } from "../../fleet/replacement/replacement-check.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { agentFixture, setInstanceState, trigger } from "../agent/harness.ts";
import { instances } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastInstance, vastOffer, type VastFakeOptions } from "../fleet/vast-server.ts";

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

/**
 * Vast.ai instance 1 (2 × RTX 4090 at $0.60/h, pytorch image) gone offline on the fake, seen so by
 * each of `agentIds` (created by `addAgent` when not `default`), and REPLACE_AFTER_S passed: what a
 * replacement proposal starts from. The caller closes the server.
 */
export async function deadOnVast(
  options: { apiKey: string; fake?: VastFakeOptions; vars?: Record<string, string>; agentIds?: string[] },
  addAgent: (deps: TestDeps, agentId: string) => Promise<unknown> = async () => {},
) {
  const { apiKey } = options;
  const old = vastInstance(1, {
    actual_status: "offline",
    cur_state: "stopped",
    machine_id: 101,
    num_gpus: 2,
    dph_total: 0.6,
    disk_space: 100,
    image_uuid: "pytorch/pytorch:2.3",
  });
  const server = await startVastServer({ apiKey, instances: [old], offers: [vastOffer(2, { dph_total: 0.62 })], ...options.fake });
  const provider = new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
  const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), VAST_API_KEY: apiKey, ...options.vars } });
  const now = deps.clock.now();
  for (const agentId of options.agentIds ?? ["default"]) {
    if (agentId !== "default") await addAgent(deps, agentId);
    await deps.db.insert(instances).values({
      agentId,
      id: "1",
      state: "offline",
      stateAt: now,
      lastSeenAt: now,
      gpuName: "RTX 4090",
      gpuCount: 2,
      pricePerHour: 0.6,
      updatedAt: now,
    });
  }
  deps.clock.advance(AFTER_S * 1000 + 1);
  return { deps, server };
}
