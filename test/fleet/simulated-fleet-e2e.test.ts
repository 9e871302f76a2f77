/**
 * The simulated fleet end to end: a failure in the simulator reaches the agent (an event a run
 * consumes), the agent's action reaches the simulator, and the quiet fleet afterwards costs
 * nothing (no further events or runs).
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { wireDeps } from "../../functions/host/wire-deps.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { events, runs } from "../../schema/index.ts";
import { advance } from "../support/drive.ts";
import { waitFor } from "../support/child-process-waits.ts";
import { authHeaders, createTestDeps, type RecordingScheduler, TEST_ADMIN_TOKEN, testConfig } from "../support/test-deps.ts";
import { startVastServer, vastInstance, type VastServer } from "./vast-server.ts";
import type { AgentRunStep } from "../../jobs/deps.ts";

/** A stand-in decider: restart every instance an event says has exited. */
const restartExited: AgentRunStep = async ({ deps, agentId, runId, events: consumed }) => {
  let mutated = false;
  for (const event of consumed) {
    const payload = event.payload as { instanceId?: string; state?: string };
    if (payload.state !== "exited" || !payload.instanceId) continue;
    const result = await executeAction(deps, {
      agentId,
      runId,
      instanceId: payload.instanceId,
      kind: "start",
      decidedBy: "rules",
      idempotencyKey: `run-${runId}-start-${payload.instanceId}`,
    });
    mutated ||= result.status === "succeeded";
  }
  return { decider: "rules", mutated, reply: null, promptTokens: 0, completionTokens: 0, contextTokens: 0, compaction: null };
};

const servers: VastServer[] = [];
const hosts: NodeHost[] = [];
afterEach(async () => {
  await Promise.all([...servers.splice(0).map((s) => s.close()), ...hosts.splice(0).map((h) => h.stop())]);
});

describe("simulated fleet, end to end", () => {
  it("a simulator failure reaches the agent, the agent's restart reaches the simulator, and then all is quiet", async () => {
    const deps = await createTestDeps({ runStep: restartExited, vars: { SIMULATOR_FAILURE_RATE: "0" } });
    const sim = deps.provider as SimulatorProvider;
    await sim.seed(3);
    const app = buildApp(() => deps);
    const api = (path: string, init: RequestInit = {}) => app.request(path, { headers: authHeaders(), ...init });

    await api("/api/cron", { method: "POST" });
    await advance(deps, deps.config.debounceStateMs); // the first run takes in the fleet
    expect(await deps.db.select().from(runs)).toHaveLength(1);

    await advance(deps, 60_000);
    expect((await api("/api/simulator/instances/sim-2/fail", { method: "POST", body: JSON.stringify({ kind: "oom" }) })).status).toBe(200);
    await advance(deps, deps.config.debounceStateMs);

    const [, second] = await deps.db.select().from(runs).orderBy(runs.runId);
    expect(second).toMatchObject({ status: "succeeded", decider: "rules", noop: false });
    expect(second!.triggers).toEqual([expect.objectContaining({ source: "webhook" })]);
    expect(await sim.get("sim-2")).toMatchObject({ state: "running" });

    // The restart is already known: the next ticks find no difference, no silence, no work.
    for (let i = 0; i < 3; i++) {
      await api("/api/cron", { method: "POST" });
      await advance(deps, 61_000);
    }
    expect(await deps.db.select().from(events).where(eq(events.status, "pending"))).toEqual([]);
    expect(await deps.db.select().from(runs)).toHaveLength(2);
    expect((deps.scheduler as RecordingScheduler).published).toEqual([]);
    const fleet = await (await api("/api/agents/default/instances")).json();
    expect(fleet.instances.map((i: { id: string; state: string }) => `${i.id}:${i.state}`)).toEqual([
      "sim-1:running",
      "sim-2:running",
      "sim-3:running",
    ]);
  });

  it("npm start with no credentials: a simulated fleet watched over HTTP, a failure reaches the agent and its restart the fleet", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fw-fleet-"));
    const host = await startNodeHost(
      {
        PORT: "0",
        DATABASE_URL: `file:${join(dir, "fw.db")}`,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        SIMULATOR_INSTANCES: "2",
        SIMULATOR_FAILURE_RATE: "0",
        DEBOUNCE_STATE_MS: "0",
      },
      { log: silentLogger, cronIntervalMs: 3_600_000 },
    );
    hosts.push(host);
    const headers = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" };
    expect(await (await fetch(`${host.url}/healthz`)).json()).toMatchObject({ provider: "simulator", simulated: true });
    await fetch(`${host.url}/api/cron`, { method: "POST", headers });
    const fleet = await (await fetch(`${host.url}/api/agents/default/instances`, { headers })).json();
    expect(fleet.simulated).toBe(true);
    expect(fleet.instances.map((i: { id: string }) => i.id)).toEqual(["sim-1", "sim-2"]);

    const failed = await fetch(`${host.url}/api/simulator/instances/sim-1/fail`, {
      method: "POST",
      headers,
      body: JSON.stringify({ kind: "exit" }),
    });
    const eventId = (await failed.json()).reports[0].eventId as number;
    // The local scheduler delivers on its own timer: wait (without asserting how long) for a run to consume the event.
    const consumedBy = await waitFor(
      `a run consuming event ${eventId}`,
      async () => {
        const { runs: recorded } = await (await fetch(`${host.url}/api/agents/default/runs`, { headers })).json();
        return (recorded as { runId: number; triggers: { id: number }[] }[]).find((r) => r.triggers.some((t) => t.id === eventId));
      },
      20_000,
    );
    expect(consumedBy.triggers.map((t) => t.id)).toContain(eventId);

    // With no LLM the rules policy decides: its restart goes through the simulator.
    const state = await waitFor(
      "sim-1 running again",
      async () => {
        const { instances } = await (await fetch(`${host.url}/api/agents/default/instances`, { headers })).json();
        const { state } = (instances as { id: string; state: string }[]).find((x) => x.id === "sim-1")!;
        return state === "running" ? state : undefined;
      },
      20_000,
    );
    expect(state).toBe("running");
  });

  it("the host chooses the Vast.ai client when VAST_API_KEY is set, talking to VAST_URL", async () => {
    const server = await startVastServer({ apiKey: "secret-key", instances: [vastInstance(31)] });
    servers.push(server);
    const base = await createTestDeps();
    const deps = wireDeps({
      db: base.db,
      clock: base.clock,
      scheduler: base.scheduler,
      log: silentLogger,
      config: testConfig({ VAST_API_KEY: "secret-key", VAST_URL: server.url }),
    });
    expect(deps.provider).toBeInstanceOf(VastProvider);
    expect((await deps.provider.list()).map((i) => i.id)).toEqual(["31"]);
    expect(server.requests[0]).toMatchObject({ path: "/api/v1/instances/", authorization: "Bearer secret-key" });
    const health = await (await buildApp(() => deps).request("/healthz")).json();
    expect(health).toMatchObject({ provider: "vast", simulated: false });
  });
});
