/**
 * Issue #25 item 1, the rest: a report for an instance outside its agent's instanceFilter is
 * 403 naming the filter and writes nothing; an id no provider lists is kept apart as
 * webhook-only (capped per agent: a new one past WEBHOOK_ONLY_INSTANCES_MAX is 429 naming the
 * cap, those kept go on reporting, and one the provider does list is stored as its instance),
 * never marked gone by reconciliation, cleared when the provider lists it, listed after the
 * provider's instances by the API, and sorted after all of them in the prompt's snapshot.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { withAgent } from "../../jobs/with-agent.ts";
import { snapshotText } from "../../agent/prompt/prompt-snapshot.ts";
import { instances } from "../../schema/index.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function setup(vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars });
  const sim = deps.provider as SimulatorProvider;
  await sim.seed(3);
  await sim.setLabel("sim-1", "a-trainer");
  const app = buildApp(() => deps);
  const count = async (table: string) => Number((await deps.db.$client.execute(`select count(*) as n from ${table}`)).rows[0]!.n);
  const report = (agent: string, id: string, instanceId: string, secret?: string, state = "running") =>
    app.request(`/webhooks/${agent}/instances`, signedWebhook(id, { instanceId, state }, secret));
  const createAgent = async (id: string, settings: unknown) => {
    const res = await app.request("/api/agents", { method: "POST", headers: authHeaders(), body: JSON.stringify({ id, settings }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { webhookSecret: string }).webhookSecret;
  };
  const reconcile = async (agentId: string) => reconcileFleet((await withAgent(deps, agentId))!.deps, agentId);
  const row = async (agentId: string, id: string) =>
    (await deps.db.select().from(instances)).find((r) => r.agentId === agentId && r.id === id);
  return { deps, app, count, report, createAgent, reconcile, row };
}

const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

describe("reports and the agent's instanceFilter", () => {
  it("ids: a report for an id the filter does not list is 403 naming the filter, nothing stored", async () => {
    const { report, createAgent, count } = await setup();
    const secret = await createAgent("team-b", { instanceFilter: { ids: ["sim-3"] } });
    const res = await report("team-b", "m1", "sim-1", secret);
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toContain("instanceFilter (ids)");
    expect(await count("events")).toBe(0);
    expect(await count("instances")).toBe(0);
    expect((await report("team-b", "m2", "sim-3", secret)).status).toBe(202);
  });

  it("labelPrefix: only an instance the provider listed with a matching label; nothing stored otherwise", async () => {
    const { report, createAgent, count, reconcile } = await setup();
    const secret = await createAgent("team-a", { instanceFilter: { labelPrefix: "a-" } });
    const before = await report("team-a", "m1", "ghost-1", secret);
    expect(before.status).toBe(403);
    expect(await errorOf(before)).toContain('labelPrefix "a-"');
    await reconcile("team-a");
    const events = await count("events");
    const instancesStored = await count("instances");
    expect((await report("team-a", "m2", "sim-2", secret)).status).toBe(403);
    expect(await count("events")).toBe(events);
    expect(await count("instances")).toBe(instancesStored);
    expect((await report("team-a", "m3", "sim-1", secret, "exited")).status).toBe(202);
  });
});

describe("webhook-only instances", () => {
  it("are capped per agent: a new id past the cap is 429 naming it and writes nothing; kept ones go on reporting", async () => {
    const { report, count, row } = await setup({ WEBHOOK_ONLY_INSTANCES_MAX: "2" });
    expect((await report("default", "g1", "ghost-1")).status).toBe(202);
    expect((await report("default", "g2", "ghost-2")).status).toBe(202);
    expect((await row("default", "ghost-1"))?.webhookOnly).toBe(true);
    const events = await count("events");
    const over = await report("default", "g3", "ghost-3");
    expect(over.status).toBe(429);
    expect(await errorOf(over)).toContain("WEBHOOK_ONLY_INSTANCES_MAX");
    expect(await count("events")).toBe(events);
    expect(await row("default", "ghost-3")).toBeUndefined();
    expect((await report("default", "g4", "ghost-1", undefined, "exited")).status).toBe(202);
    // Past the cap, an id the provider lists (not reconciled yet) is the provider's instance.
    expect((await report("default", "g5", "sim-2")).status).toBe(202);
    expect((await row("default", "sim-2"))?.webhookOnly).toBe(false);
  });

  it("reconciliation never marks one gone, and clears the mark once the provider lists it", async () => {
    const { report, reconcile, row } = await setup();
    expect((await report("default", "g1", "ghost-1")).status).toBe(202);
    expect((await report("default", "s1", "sim-1")).status).toBe(202);
    expect((await row("default", "sim-1"))?.webhookOnly).toBe(true);
    const done = await reconcile("default");
    expect(done.gone).toEqual([]);
    expect(await row("default", "ghost-1")).toMatchObject({ webhookOnly: true, goneAt: null });
    expect((await row("default", "sim-1"))?.webhookOnly).toBe(false);
  });

  it("are listed apart by the API and sorted after every provider instance in the prompt", async () => {
    const { deps, app, report, reconcile } = await setup();
    await reconcile("default");
    // A webhook-only instance in a state that needs attention, against healthy provider instances.
    expect((await report("default", "g1", "aaa-ghost", undefined, "exited")).status).toBe(202);
    const listed = (
      (await (await app.request("/api/agents/default/instances", { headers: authHeaders() })).json()) as {
        instances: { id: string; webhookOnly: boolean }[];
      }
    ).instances;
    expect(listed.at(-1)).toMatchObject({ id: "aaa-ghost", webhookOnly: true });
    expect(listed.filter((i) => !i.webhookOnly).map((i) => i.id)).toEqual(["sim-1", "sim-2", "sim-3"]);

    const rows = await deps.db.select().from(instances);
    const text = snapshotText({ rows, spendTodayUsd: 0, now: deps.clock.now() }, deps.config);
    const order = [...text.matchAll(/"id":"([^"]+)"/g)].map((m) => m[1]);
    expect(order.at(-1)).toBe("aaa-ghost");
    expect(text).toContain('"webhookOnly":true');
  });
});
