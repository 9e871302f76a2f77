/**
 * Attack: whoever holds an agent's webhook secret (or a compromised instance of the agent) reports
 * on an instance outside the agent's instance filter (another team's rental on the shared
 * account, or an id never rented) to make the agent record it and act on it (a report of
 * `offline` leads to a replacement proposal, a restart, a destroy).
 * Guard: jobs/instance-report.ts checks the agent's filter at the door: a report for an instance
 * outside it is 403 with a JSON error naming the filter and nothing is written (no event, no
 * instance, no state history); the agent's own rental, claimed by its `fw-own:` label, is accepted.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { instances } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function setup() {
  const deps = await createTestDeps();
  const sim = deps.provider as SimulatorProvider;
  await sim.seed(3);
  await sim.setLabel("sim-1", "a-trainer");
  const app = buildApp(() => deps);
  const count = async (table: string) => Number((await deps.db.$client.execute(`select count(*) as n from ${table}`)).rows[0]!.n);
  const written = async () => ({
    events: await count("events"),
    instances: await count("instances"),
    history: await count("instance_events"),
  });
  const createAgent = async (id: string, settings: unknown) => {
    const res = await app.request("/api/agents", { method: "POST", headers: authHeaders(), body: JSON.stringify({ id, settings }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { webhookSecret: string }).webhookSecret;
  };
  const report = (agent: string, id: string, instanceId: string, secret: string, state = "offline") =>
    app.request(`/webhooks/${agent}/instances`, signedWebhook(id, { instanceId, state }, secret));
  return { deps, app, written, createAgent, report };
}

describe("an instance report outside the agent's filter", () => {
  it("ids filter: another team's instance is 403 JSON naming the filter, nothing written", async () => {
    const { written, createAgent, report } = await setup();
    const secret = await createAgent("team-b", { instanceFilter: { ids: ["sim-3"] } });
    const before = await written();
    const res = await report("team-b", "w1", "sim-1", secret);
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toMatch(/json/);
    expect(((await res.json()) as { error: string }).error).toMatch(/outside agent team-b's instanceFilter \(ids\).*nothing stored/);
    expect(await written()).toEqual(before);
  });

  it("label filter: an instance without the prefix is 403, nothing written", async () => {
    const { written, createAgent, report } = await setup();
    const secret = await createAgent("team-a", { instanceFilter: { labelPrefix: "a-" } });
    const before = await written();
    const res = await report("team-a", "w1", "sim-2", secret);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/labelPrefix "a-"/);
    expect(await written()).toEqual(before);
  });

  it("ids filter: the agent's own rental (stored with its fw-own: label) is accepted; another agent's own rental is not", async () => {
    const { deps, createAgent, report, written } = await setup();
    const secret = await createAgent("team-b", { instanceFilter: { ids: ["sim-3"] } });
    const now = deps.clock.now();
    const row = { state: "running", stateAt: now, lastSeenAt: now, updatedAt: now };
    await deps.db.insert(instances).values([
      { ...row, agentId: "team-b", id: "rent-1", label: "fw-own:team-b:fw-replace-x" },
      { ...row, agentId: "team-b", id: "rent-2", label: "fw-own:team-c:fw-replace-y" },
    ]);
    expect((await report("team-b", "w1", "rent-1", secret)).status).toBe(202);
    const before = await written();
    expect((await report("team-b", "w2", "rent-2", secret)).status).toBe(403);
    expect(await written()).toEqual(before);
  });
});
