/**
 * The attack tests' shared steps: an agent's settings set through the agents API, the
 * replacement check run as a tick with the agent's own scope (its filter, its mode: as the real
 * tick scopes it, jobs/tick.ts), and the notices a human was sent.
 */
import { expect } from "vitest";
import { notifications } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { checkReplacements, type ReplacementsReport } from "../../fleet/replacement/replacement-check.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { api } from "../replacement/support.ts";

/** PATCHes the agent's settings (merged) through the API, as an operator would. */
export async function setSettings(deps: TestDeps, agentId: string, settings: Record<string, unknown>) {
  const res = await api(deps, `/api/agents/${agentId}`, { method: "PATCH", body: JSON.stringify({ settings }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Creates an agent through the API. */
export async function createAgent(deps: TestDeps, id: string, settings: Record<string, unknown> = {}) {
  const res = await api(deps, "/api/agents", { method: "POST", body: JSON.stringify({ id, settings }) });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** Sets the agent's mode through the pause switch's route. */
export async function setMode(deps: TestDeps, agentId: string, mode: "act" | "shadow") {
  const res = await api(deps, `/api/agents/${agentId}/mode`, { method: "POST", body: JSON.stringify({ mode }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** The replacement check as one tick of `agentId`, with the agent's scope. */
export async function scopedTick(deps: TestDeps, agentId = "default"): Promise<ReplacementsReport> {
  const scope = (await withAgent(deps, agentId))!;
  return runTickCheck<ReplacementsReport, TestDeps>(scope.deps as TestDeps, agentId, checkReplacements);
}

export async function scopedDeps(deps: TestDeps, agentId = "default"): Promise<TestDeps> {
  return (await withAgent(deps, agentId))!.deps as TestDeps;
}

export const notices = (deps: TestDeps) => deps.db.select().from(notifications).orderBy(notifications.id);
