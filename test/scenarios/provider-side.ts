/**
 * What the trust and economics scenarios (shadow-, bounds-, economics-scenario.ts) do from outside
 * on either host: change the simulated provider's side (an instance exits, works at 0 %), make an
 * instance report it by signed webhook, read the provider's state back to tell whether fleetwarden
 * called it, and play one run the scripted model decides. Reached only through the host's
 * database (the provider's table) and HTTP, like the rest of the driver.
 */
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { simulatorInstances } from "../../schema/index.ts";
import type { Scripted } from "../support/scripted-llm.ts";
import { api, finished, idle, instanceWebhook, lastRunId, settleUntil, type ScenarioHost } from "./driver.ts";

export interface ActionView {
  runId: number | null;
  instanceId: string;
  kind: string;
  status: string;
  decidedBy: string;
  evidence: { eventIds: number[]; humanMessage?: { text: string } } | null;
  result: { providerCalled?: boolean; shadow?: boolean } | null;
  error: string | null;
}

/** The simulated provider's own row for the instance (what only a provider call changes). */
export async function providerRow(host: ScenarioHost, id: string) {
  const [row] = await host.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, id));
  return row ? { state: row.state, updatedAt: row.updatedAt, failure: row.failure } : undefined;
}

/** The instance exits at the provider and says so by signed webhook. */
export async function providerFails(host: ScenarioHost, id: string) {
  await host.db
    .update(simulatorInstances)
    .set({ state: "exited", statusMessage: "exit code 1 (scenario)", updatedAt: Date.now() })
    .where(eq(simulatorInstances.id, id));
  expect((await instanceWebhook(host, { instanceId: id, state: "exited", message: "exit code 1" })).status).toBe(202);
}

/**
 * Makes the provider agree with what fleetwarden last heard about these instances (earlier
 * scenarios report by webhook what the provider never did), so a later tick's reconciliation
 * finds nothing to start a run about.
 */
export async function providerAgrees(host: ScenarioHost, ids: string[]) {
  const fleet = (await api(host, "GET", "/api/agents/default/instances")).instances as { id: string; state: string }[];
  for (const i of fleet.filter((f) => ids.includes(f.id))) {
    await host.db.update(simulatorInstances).set({ state: i.state }).where(eq(simulatorInstances.id, i.id));
  }
}

/** The actions audit of one run. */
export async function actionsOfRun(host: ScenarioHost, runId: number): Promise<ActionView[]> {
  return ((await api(host, "GET", "/api/agents/default/actions?limit=100")).actions as ActionView[]).filter((a) => a.runId === runId);
}

/** Queues the model's answers, lets `trigger` wake the agent, and waits for that one run; its id. */
export async function scriptedRun(host: ScenarioHost, script: Scripted[], trigger: () => Promise<unknown>): Promise<number> {
  const runId = (await lastRunId(host)) + 1;
  host.llm.push(...script);
  await trigger();
  await settleUntil(host, () => finished(host, runId));
  await settleUntil(host, () => idle(host));
  expect(await lastRunId(host)).toBe(runId);
  expect(host.llm.pending).toBe(0);
  return runId;
}
