/**
 * The provider account's balance (fleet/economics/balance-check.ts) against the strict Vast.ai and
 * RunPod stand-ins over loopback: told once below BALANCE_WARN_HOURS of the burn (not again on the
 * next tick), not told above it, not told on a read failure, read at most once per
 * BALANCE_READ_EVERY_MS; and shown by GET /spend and the read model.
 */
import { afterEach, describe, expect, it } from "vitest";
import { instances, notifications } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { BALANCE_READ_EVERY_MS, checkBalance, type BalanceReport } from "../../fleet/economics/balance-check.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { RunpodProvider } from "../../fleet/providers/runpod.ts";
import { LambdaProvider } from "../../fleet/providers/lambda.ts";
import type { FleetProvider } from "../../fleet/providers/provider.ts";
import { loadBalance } from "../../jobs/read-models/balance.ts";
import { startVastServer, type VastServer } from "../fleet/vast-server.ts";
import { startRunpodServer, type RunpodServer } from "../fleet/runpod-server.ts";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { buildApp } from "../../functions/app.ts";
import { MIN } from "./economics-fixture.ts";

let servers: (VastServer | RunpodServer)[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

/** An agent burning $2/h (one running instance) on `provider`. */
async function agentOn(provider: FleetProvider): Promise<TestDeps> {
  const deps = await createTestDeps({ provider });
  const now = deps.clock.now();
  await deps.db
    .insert(instances)
    .values({ agentId: "default", id: "1001", state: "running", stateAt: now, lastSeenAt: now, updatedAt: now, pricePerHour: 2 });
  return deps;
}

const tick = (deps: TestDeps) => runTickCheck<BalanceReport, TestDeps>(deps, "default", checkBalance);
const told = async (deps: TestDeps) => (await deps.db.select().from(notifications)).map((n) => `${n.title} | ${n.body}`);

async function vast(credit: number, apiKey = "vast-key") {
  const server = await startVastServer({ apiKey: "vast-key", credit });
  servers.push(server);
  return { server, provider: new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} }) };
}

async function runpod(clientBalance: number) {
  const server = await startRunpodServer({ apiKey: "rp-key", clientBalance });
  servers.push(server);
  return { server, provider: new RunpodProvider({ apiKey: "rp-key", url: server.url, sleep: async () => {} }) };
}

describe("the balance check", () => {
  it("tells once when Vast.ai credit covers less than 24 h of the burn, naming balance, burn and hours left", async () => {
    const { provider } = await vast(30);
    const deps = await agentOn(provider);
    expect(await tick(deps)).toMatchObject({ status: "read", usd: 30, burnPerHour: 2, hoursLeft: 15, told: true });
    const said = await told(deps);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("$30.00");
    expect(said[0]).toContain("$2.00/hour");
    expect(said[0]).toContain("15.0 h");
    deps.clock.advance(BALANCE_READ_EVERY_MS);
    expect(await tick(deps)).toMatchObject({ status: "read", told: false });
    expect(await told(deps)).toHaveLength(1);
  });

  it("tells on RunPod's clientBalance, saying RunPod stops every pod", async () => {
    const { provider, server } = await runpod(10);
    const deps = await agentOn(provider);
    expect(await tick(deps)).toMatchObject({ status: "read", usd: 10, hoursLeft: 5, told: true });
    expect((await told(deps))[0]).toContain("RunPod stops every pod");
    expect(server.requests.some((r) => JSON.stringify(r).includes("clientBalance"))).toBe(true);
  });

  it("does not tell above the threshold", async () => {
    const { provider } = await vast(500);
    const deps = await agentOn(provider);
    expect(await tick(deps)).toMatchObject({ status: "read", usd: 500, hoursLeft: 250, told: false });
    expect(await told(deps)).toEqual([]);
  });

  it("does not tell on a read failure (a refused key is a 401), and keeps the bound", async () => {
    const { provider, server } = await vast(1, "wrong-key");
    const deps = await agentOn(provider);
    const report = await tick(deps);
    expect(report.status).toBe("read failed");
    expect(await told(deps)).toEqual([]);
    const asked = server.requests.length;
    deps.clock.advance(5 * MIN);
    expect(await tick(deps)).toEqual({ status: "read recently" });
    expect(server.requests.length).toBe(asked);
  });

  it("reads at most once per 10 minutes per agent and account", async () => {
    const { provider, server } = await vast(30);
    const deps = await agentOn(provider);
    await tick(deps);
    const reads = () => server.requests.filter((r) => r.path === "/api/v0/users/current/").length;
    expect(reads()).toBe(1);
    deps.clock.advance(BALANCE_READ_EVERY_MS - 1);
    expect(await tick(deps)).toEqual({ status: "read recently" });
    expect(reads()).toBe(1);
    deps.clock.advance(1);
    await tick(deps);
    expect(reads()).toBe(2);
  });

  it("is shown by the read model with the hours it lasts", async () => {
    const { provider } = await vast(30);
    const deps = await agentOn(provider);
    expect(await loadBalance(deps, "default")).toBeNull();
    await tick(deps);
    expect(await loadBalance(deps, "default")).toEqual({ usd: 30, hoursLeft: 15, at: new Date(deps.clock.now()).toISOString() });
  });

  it("is answered by GET /api/agents/:agent/spend as balance { usd, hoursLeft, at }", async () => {
    const { provider } = await runpod(48);
    const deps = await agentOn(provider);
    await tick(deps);
    const res = await buildApp(() => deps).request("/api/agents/default/spend", { headers: authHeaders() });
    expect(res.status).toBe(200);
    expect((await res.json()).balance).toEqual({ usd: 48, hoursLeft: 24, at: new Date(deps.clock.now()).toISOString() });
  });

  it("is not read from a provider without a balance API (Lambda Cloud)", async () => {
    // Nothing listens there: a balance call would fail, and the report would say "read failed".
    const deps = await agentOn(new LambdaProvider({ apiKey: "lambda-key", baseUrl: "http://127.0.0.1:9" }));
    expect(await tick(deps)).toEqual({ status: "no balance API" });
    expect(await loadBalance(deps, "default")).toBeNull();
  });
});
