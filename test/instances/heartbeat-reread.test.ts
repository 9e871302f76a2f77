/**
 * A missed heartbeat acted on (fleet/instances/heartbeat-reread.ts): a webhook reporter silent past
 * HEARTBEAT_TIMEOUT_S is read again from the provider; running there, a human is told once that it
 * is unreachable. Bounds: one re-read per silence episode, at most REREADS_PER_TICK a tick.
 */
import { describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { instances, onceNotices, simulatorInstances } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { REREADS_PER_TICK, rereadSilentInstances, type RereadReport } from "../../fleet/instances/heartbeat-reread.ts";
import { checkMissedHeartbeats } from "../../fleet/instances/heartbeat-escalation.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { fleetFixture, MIN, noticeTitles, setInstance } from "../economics/economics-fixture.ts";

const reread = (deps: TestDeps) => runTickCheck<RereadReport, TestDeps>(deps, "default", rereadSilentInstances);

async function silent(deps: TestDeps, id: string, forMin: number) {
  await setInstance(deps, id, { reportsByWebhook: true, lastSeenAt: deps.clock.now() - forMin * MIN });
}

describe("re-reading a silent instance", () => {
  it("tells once that a silent instance the provider says runs is unreachable", async () => {
    const { deps, provider } = await fleetFixture();
    const get = vi.spyOn(provider, "get");
    await silent(deps, "sim-1", 6);
    await silent(deps, "sim-2", 4); // within the 5 min timeout: not silent yet
    expect(await reread(deps)).toEqual({ unreachable: ["sim-1"], marked: [] });
    deps.clock.advance(MIN);
    expect(await reread(deps)).toEqual({ unreachable: [], marked: [] });
    expect(get.mock.calls.map(([id]) => id)).toEqual(["sim-1"]);
    expect(await noticeTitles(deps)).toEqual(["Instance sim-1 is unreachable"]);
  });

  it("the provider saying it does not run: marked, nobody told, not read again", async () => {
    const { deps, provider } = await fleetFixture();
    const get = vi.spyOn(provider, "get");
    await deps.db.update(simulatorInstances).set({ state: "stopped" }).where(eq(simulatorInstances.id, "sim-1"));
    await silent(deps, "sim-1", 6);
    expect(await reread(deps)).toEqual({ unreachable: [], marked: ["sim-1"] });
    expect(await reread(deps)).toEqual({ unreachable: [], marked: [] });
    expect(get).toHaveBeenCalledTimes(1);
    expect(await noticeTitles(deps)).toEqual([]);
  });

  it("a report starts a new silence episode, read and told again", async () => {
    const { deps } = await fleetFixture();
    await silent(deps, "sim-1", 6);
    await reread(deps);
    deps.clock.advance(10 * MIN);
    await silent(deps, "sim-1", 6); // it reported 4 minutes after, then fell silent again
    expect((await reread(deps)).unreachable).toEqual(["sim-1"]);
    expect(await noticeTitles(deps)).toEqual(["Instance sim-1 is unreachable", "Instance sim-1 is unreachable"]);
  });

  it("instances that never reported by webhook are not expected to heartbeat", async () => {
    const { deps, provider } = await fleetFixture();
    const get = vi.spyOn(provider, "get");
    await setInstance(deps, "sim-1", { lastSeenAt: deps.clock.now() - 60 * MIN });
    expect(await reread(deps)).toEqual({ unreachable: [], marked: [] });
    expect(get).not.toHaveBeenCalled();
  });

  it(`reads at most ${REREADS_PER_TICK} a tick, longest silent first; the rest next tick`, async () => {
    const { deps, provider } = await fleetFixture();
    const get = vi.spyOn(provider, "get");
    const now = deps.clock.now();
    await deps.db.insert(instances).values(
      Array.from({ length: REREADS_PER_TICK + 3 }, (_, i) => ({
        agentId: "default",
        id: `quiet-${i}`,
        state: "running",
        stateAt: now - 60 * MIN,
        lastSeenAt: now - (30 + i) * MIN,
        reportsByWebhook: true,
        updatedAt: now,
      })),
    );
    const first = await reread(deps);
    expect(first.marked).toHaveLength(REREADS_PER_TICK); // the simulator does not list them
    expect(first.marked[0]).toBe(`quiet-${REREADS_PER_TICK + 2}`);
    expect((await reread(deps)).marked).toHaveLength(3);
    expect((await reread(deps)).marked).toHaveLength(0);
    expect(get).toHaveBeenCalledTimes(REREADS_PER_TICK + 3);
    expect(await deps.db.select().from(onceNotices)).toHaveLength(REREADS_PER_TICK + 3);
  });

  it("the escalation check tells nobody again about a silence already told unreachable", async () => {
    const { deps } = await fleetFixture();
    await silent(deps, "sim-1", 6);
    const { flagSilentInstances } = await import("../support/one-check.ts");
    await flagSilentInstances(deps, "default");
    await reread(deps);
    await deps.db.$client.execute("update events set status = 'consumed'");
    deps.clock.advance(MIN);
    expect(await runTickCheck(deps, "default", checkMissedHeartbeats)).toEqual([]);
    expect(await noticeTitles(deps)).toEqual(["Instance sim-1 is unreachable"]);
  });
});
