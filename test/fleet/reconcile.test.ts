import { afterEach, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { reconcileFleet } from "../support/one-check.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { agents, events, instanceEvents, instances } from "../../schema/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";
import { startVastServer, vastInstance, type Answer, type VastFakeOptions, type VastServer } from "./vast-server.ts";

let server: VastServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function simulatedDeps(count: number) {
  const base = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0", RECONCILE_INTERVAL_S: "60" } });
  const provider = new SimulatorProvider(base.db, base.clock);
  await provider.seed(count);
  return { deps: { ...base, provider }, provider };
}

async function vastDeps(options: VastFakeOptions) {
  server = await startVastServer({ apiKey: "k", ...options });
  const base = await createTestDeps({ vars: { RECONCILE_INTERVAL_S: "60" } });
  const provider = new VastProvider({ apiKey: "k", baseUrl: server.url, sleep: async () => {}, maxAttempts: 1 });
  return { deps: { ...base, provider }, requests: server.requests };
}

const eventRows = (deps: { db: Awaited<ReturnType<typeof createTestDeps>>["db"] }) => deps.db.select().from(events).orderBy(events.id);
const stored = (deps: { db: Awaited<ReturnType<typeof createTestDeps>>["db"] }) => deps.db.select().from(instances).orderBy(instances.id);

describe("reconciliation", () => {
  it("records every instance it has not seen as a priority-1 reconcile event, with provider details", async () => {
    const { deps } = await simulatedDeps(2);
    const report = await reconcileFleet(deps, "default");
    expect(report).toMatchObject({ ran: true, changed: ["sim-1", "sim-2"], gone: [] });
    const rows = await eventRows(deps);
    expect(rows.map((e) => [e.source, e.priority, e.status])).toEqual([
      ["reconcile", 1, "pending"],
      ["reconcile", 1, "pending"],
    ]);
    expect(await stored(deps)).toEqual([
      expect.objectContaining({
        id: "sim-1",
        state: "running",
        gpuName: "RTX 4090",
        gpuCount: 1,
        pricePerHour: 0.42,
        label: "trainer-1",
        reportsByWebhook: false,
      }),
      expect.objectContaining({ id: "sim-2", state: "running", gpuName: "A100 SXM4", gpuCount: 2 }),
    ]);
    expect((deps.scheduler as RecordingScheduler).published).toHaveLength(1);
  });

  it("a state that changed without a webhook becomes one event; unchanged instances only get fresher details", async () => {
    const { deps, provider } = await simulatedDeps(2);
    await reconcileFleet(deps, "default");
    deps.clock.advance(61_000);
    await provider.injectFailure("sim-1", "oom"); // no report sent: only reconciliation can notice
    await provider.setLabel("sim-2", "renamed");
    const report = await reconcileFleet(deps, "default");
    expect(report).toMatchObject({ changed: ["sim-1"], refreshed: ["sim-2"], gone: [] });
    const rows = await eventRows(deps);
    expect(rows).toHaveLength(3);
    expect(rows[2]!.payload).toMatchObject({ instanceId: "sim-1", state: "exited", message: expect.stringMatching(/CUDA out of memory/) });
    const history = await deps.db.select().from(instanceEvents).where(eq(instanceEvents.instanceId, "sim-1"));
    expect(history.map((h) => [h.fromState, h.toState, h.source])).toEqual([
      [null, "running", "reconcile"],
      ["running", "exited", "reconcile"],
    ]);
    const [, sim2] = await stored(deps);
    expect(sim2).toMatchObject({ label: "renamed", state: "running" });

    deps.clock.advance(61_000);
    expect(await reconcileFleet(deps, "default")).toMatchObject({ ran: true, changed: [], refreshed: [], gone: [] });
    expect(await eventRows(deps)).toHaveLength(3);
  });

  it("asks the provider at most once per RECONCILE_INTERVAL_S", async () => {
    const { deps, requests } = await vastDeps({ instances: [vastInstance(1)] });
    expect((await reconcileFleet(deps, "default")).ran).toBe(true);
    deps.clock.advance(59_000);
    expect((await reconcileFleet(deps, "default")).ran).toBe(false);
    expect(requests).toHaveLength(1);
    deps.clock.advance(1_000);
    expect((await reconcileFleet(deps, "default")).ran).toBe(true);
    expect(requests).toHaveLength(2);
  });

  it("an instance the provider no longer lists is marked gone, kept, and announced once", async () => {
    const { deps, provider } = await simulatedDeps(2);
    await reconcileFleet(deps, "default");
    await provider.destroy("sim-2");
    deps.clock.advance(61_000);
    expect((await reconcileFleet(deps, "default")).gone).toEqual(["sim-2"]);
    deps.clock.advance(61_000);
    expect((await reconcileFleet(deps, "default")).gone).toEqual([]);
    const [, sim2] = await stored(deps);
    expect(sim2).toMatchObject({ id: "sim-2", goneAt: deps.clock.now() - 61_000, state: "running" });
    const gone = (await eventRows(deps)).filter((e) => (e.payload as { gone?: boolean }).gone);
    expect(gone).toEqual([expect.objectContaining({ source: "reconcile", priority: 1, status: "pending" })]);
    const history = await deps.db
      .select()
      .from(instanceEvents)
      .where(and(eq(instanceEvents.instanceId, "sim-2"), eq(instanceEvents.toState, "gone")));
    expect(history).toHaveLength(1);
  });

  it("a failed or malformed list records nothing, gives the turn back and reports the error", async () => {
    for (const answer of [{ status: 500, body: { error: "boom" } }, { status: 410, body: {} }, { body: { instances: null } }] as Answer[]) {
      let fault: Answer | undefined;
      const { deps } = await vastDeps({ instances: [vastInstance(1), vastInstance(2)], intercept: () => fault });
      await reconcileFleet(deps, "default");
      fault = answer;
      deps.clock.advance(61_000);
      const before = await eventRows(deps);
      await expect(reconcileFleet(deps, "default")).rejects.toThrow(/Vast.ai/);
      expect(await eventRows(deps)).toEqual(before);
      expect((await stored(deps)).every((row) => row.goneAt === null)).toBe(true);
      const [agent] = await deps.db.select().from(agents).where(eq(agents.id, "default"));
      expect(agent!.lastReconciledAt).toBe(deps.clock.now() - 61_000);
      await server!.close();
      server = null;
    }
  });

  it("a Vast list page that contradicts its own total_instances marks nothing gone and records nothing", async () => {
    let fault: Answer | undefined;
    const { deps, requests } = await vastDeps({
      instances: Array.from({ length: 30 }, (_, i) => vastInstance(i + 1)),
      intercept: () => fault,
    });
    await reconcileFleet(deps, "default");
    expect((await stored(deps)).length).toBe(30);
    for (const body of [
      { instances: [], next_token: null, total_instances: 30 },
      { instances: [vastInstance(1)], total_instances: 30 },
    ]) {
      fault = { body };
      deps.clock.advance(61_000);
      const before = await eventRows(deps);
      await expect(reconcileFleet(deps, "default")).rejects.toThrow(/contradicts itself/);
      expect(await eventRows(deps)).toEqual(before);
      expect((await stored(deps)).filter((row) => row.goneAt !== null)).toEqual([]);
    }
    expect(requests.length).toBe(2 + 2);
  });

  it("an instance Vast still lists as destroyed or unloaded is marked gone like an unlisted one, not unknown or offline", async () => {
    const { deps } = await vastDeps({ instances: [vastInstance(1), vastInstance(2), vastInstance(3)], keepDestroyed: true });
    await reconcileFleet(deps, "default");
    await deps.provider.destroy("2");
    Object.assign(server!.instances.get(3)!, { actual_status: null, cur_state: "unloaded" });
    expect(server!.instances.get(2)).toMatchObject({ actual_status: "destroyed" }); // still listed
    deps.clock.advance(61_000);
    expect(await reconcileFleet(deps, "default")).toMatchObject({ changed: [], gone: ["2", "3"] });
    const rows = await stored(deps);
    expect(rows.map((r) => [r.id, r.state, r.goneAt])).toEqual([
      ["1", "running", null],
      ["2", "running", deps.clock.now()],
      ["3", "running", deps.clock.now()],
    ]);
    const gone = (await eventRows(deps)).filter((e) => (e.payload as { gone?: boolean }).gone);
    expect(gone.map((e) => (e.payload as { instanceId: string }).instanceId)).toEqual(["2", "3"]);
  });

  it("an instance that reappears is no longer gone and its return is an event", async () => {
    const { deps } = await simulatedDeps(0);
    // Known from an earlier listing (an instance first seen in a webhook is webhook-only: never gone, test/fleet/webhook-only.test.ts).
    await recordInstanceState(deps, { agentId: "default", instanceId: "sim-1", state: "running", source: "reconcile", dedupKey: "r1" });
    await reconcileFleet(deps, "default");
    expect((await stored(deps))[0]!.goneAt).not.toBeNull();
    await deps.provider.seed(1);
    deps.clock.advance(61_000);
    expect((await reconcileFleet(deps, "default")).changed).toEqual(["sim-1"]);
    expect((await stored(deps))[0]!.goneAt).toBeNull();
  });

  it("runs from the cron tick; a provider failure is logged against the check and the tick goes on", async () => {
    let failing = false;
    const { deps } = await vastDeps({
      instances: [vastInstance(77)],
      intercept: () => (failing ? { status: 401, body: { error: "auth_error" } } : undefined),
    });
    const errors: Record<string, unknown>[] = [];
    const logged = {
      ...deps,
      log: { info: () => {}, error: (_m: string, fields?: Record<string, unknown>) => void errors.push(fields ?? {}) },
    };
    await runCronTick(logged);
    expect((await stored(deps)).map((r) => r.id)).toEqual(["77"]);
    failing = true;
    deps.clock.advance(61_000);
    const report = await runCronTick(logged);
    expect(report.map((r) => r.agentId)).toEqual(["default"]);
    expect(errors.some((f) => f.check === "reconcileInstances" && String(f.error).includes("401"))).toBe(true);
    expect((await stored(deps))[0]!.goneAt).toBeNull();
  });
});
