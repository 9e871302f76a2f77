/**
 * What the agent and the API see of spend and telemetry: GET /api/agents/:agent/spend, the
 * instances API's spentTodayUsd, and get_instance's telemetry and spend.
 */
import { describe, expect, it } from "vitest";
import { instanceSpend } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { authHeaders } from "../support/test-deps.ts";
import { runEconomics } from "../support/one-check.ts";
import { fleetFixture, MIN, setInstance } from "./economics-fixture.ts";
import { agentFixture, say, scriptedLlm } from "../agent/harness.ts";
import { instances } from "../../schema/index.ts";
import { and, eq } from "drizzle-orm";

describe("GET /api/agents/:agent/spend", () => {
  it("answers today against the limit, the burn per hour, the last 7 days and today per instance", async () => {
    const { deps } = await fleetFixture({ SPEND_LIMIT_PER_DAY_USD: "20" });
    deps.clock.set(Date.UTC(2026, 0, 1, 12));
    const now = deps.clock.now();
    await setInstance(deps, "sim-1", { pricePerHour: 2, spendAccruedAt: now - 60 * MIN });
    await setInstance(deps, "sim-2", { state: "stopped", pricePerHour: 2, storagePerHour: 0.5, spendAccruedAt: now - 60 * MIN });
    await deps.db.insert(instanceSpend).values([
      { agentId: "default", instanceId: "sim-1", day: "2025-12-30", usd: 3 },
      { agentId: "default", instanceId: "sim-1", day: "2025-12-20", usd: 99 },
    ]);
    await runEconomics(deps, "default");

    const res = await buildApp(() => deps).request("/api/agents/default/spend", { headers: authHeaders() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      estimate: true,
      // sim-3 runs with no price known: it costs nothing in the estimate.
      today: { usd: 2.5, limitUsd: 20, burnPerHour: 2.5 },
      days: [
        { day: "2025-12-26", usd: 0 },
        { day: "2025-12-27", usd: 0 },
        { day: "2025-12-28", usd: 0 },
        { day: "2025-12-29", usd: 0 },
        { day: "2025-12-30", usd: 3 },
        { day: "2025-12-31", usd: 0 },
        { day: "2026-01-01", usd: 2.5 },
      ],
      instances: [
        { id: "sim-1", usdToday: 2 },
        { id: "sim-2", usdToday: 0.5 },
      ],
      // No balance check ran: nothing read yet.
      balance: null,
    });

    const list = await (await buildApp(() => deps).request("/api/agents/default/instances", { headers: authHeaders() })).json();
    expect(list.instances.map((i: { id: string; spentTodayUsd: number }) => [i.id, i.spentTodayUsd])).toEqual([
      ["sim-1", 2],
      ["sim-2", 0.5],
      ["sim-3", 0],
    ]);
  });

  it("refuses a malformed or unknown agent with a JSON error", async () => {
    const { deps } = await fleetFixture();
    const bad = await buildApp(() => deps).request("/api/agents/no%20such/spend", { headers: authHeaders() });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/agent/);
    const unknown = await buildApp(() => deps).request("/api/agents/nobody/spend", { headers: authHeaders() });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toBe("unknown agent: nobody");
  });
});

describe("get_instance", () => {
  it("returns the instance's telemetry, idle state with its signal, cost per hour and spend today", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    const now = deps.clock.now();
    await deps.db
      .update(instances)
      .set({ pricePerHour: 1.25, gpuUtil: 0, gpuUtilAt: now - MIN, idleSince: now - 45 * MIN, telemetrySource: "webhook", diskUsedPct: 40 })
      .where(and(eq(instances.agentId, "default"), eq(instances.id, "sim-1")));
    await deps.db.insert(instanceSpend).values({ agentId: "default", instanceId: "sim-1", day: "2026-01-01", usd: 0.75 });
    llm.push({ tools: [{ name: "get_instance", arguments: { instance_id: "sim-1" }, id: "call_a" }] }, { text: "It is idle." });

    await say(deps, "is sim-1 busy?");

    const output = JSON.parse(llm.requests[1]!.messages.find((m) => m.role === "tool")!.content!);
    expect(output).toMatchObject({
      id: "sim-1",
      telemetry: {
        gpuUtil: 0,
        diskUsedPct: 40,
        source: "webhook",
        idle: { idle: true, signal: expect.stringMatching(/^gpu_util 0 % for 4\d min, from the instance's webhook$/) },
      },
      spend: { estimate: true, costPerHour: 1.25, usdToday: 0.75 },
    });
  });
});
