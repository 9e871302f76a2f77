/**
 * The fanned-out tick: fanOutTick publishes one `tick` delivery per active agent (dedup key per
 * agent and minute), as the scheduled tick does for the due agents past its inline places
 * (test/pipeline/scheduled-tick.test.ts); each delivery runs that agent's repairs and fleet checks. Bounds: a second fan-out in the same minute publishes nothing new; an archived
 * agent gets no tick.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { archiveAgent, createAgent } from "../../pipeline/index.ts";
import { listRuns } from "../../pipeline/index.ts";
import { handleDelivery } from "../../jobs/deliver.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { fanOutTick } from "../../jobs/tick.ts";
import { authHeaders, createTestDeps, FlakyScheduler, type RecordingScheduler } from "../support/test-deps.ts";

describe("fanned-out cron tick", () => {
  it("publishes one tick per active agent, deduplicated per agent and minute", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    for (const id of ["a1", "a2", "gone"]) await createAgent(deps.db, { id, settings: {} }, deps.clock.now());
    await archiveAgent(deps.db, "gone", deps.clock.now());

    expect((await fanOutTick(deps)).sort()).toEqual(["a1", "a2", "default"]);
    const minute = Math.floor(deps.clock.now() / 60_000);
    expect(scheduler.published.map((p) => [p.dedupKey, p.body]).sort()).toEqual([
      [`tick:a1:${minute}`, { type: "tick", agentId: "a1" }],
      [`tick:a2:${minute}`, { type: "tick", agentId: "a2" }],
      [`tick:default:${minute}`, { type: "tick", agentId: "default" }],
    ]);
    deps.clock.advance(10_000);
    await fanOutTick(deps);
    expect(scheduler.published).toHaveLength(3);
    deps.clock.advance(60_000);
    await fanOutTick(deps);
    expect(scheduler.published).toHaveLength(6);
  });

  it("a tick delivery runs that agent's repairs only: its lost run is requested, another agent's is not", async () => {
    const flaky = new FlakyScheduler();
    const deps = await createTestDeps({ scheduler: flaky });
    await createAgent(deps.db, { id: "other", settings: {} }, deps.clock.now());
    // Both agents get a message whose run publish was lost.
    await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "m1", payload: { text: "hi" } });
    await ingestEvent(deps, { agentId: "other", source: "human", priority: 0, dedupKey: "m2", payload: { text: "hi" } });
    flaky.down = false;
    deps.clock.advance(2000 + 60_000);

    expect(await handleDelivery(deps, { type: "tick", agentId: "default" })).toBe("ticked");
    const repaired = flaky.takeDue(deps.clock.now());
    expect(repaired.map((p) => [p.body.type, p.body.agentId])).toEqual([["run", "default"]]);
    expect(await handleDelivery(deps, repaired[0]!.body)).toBe("succeeded");
    expect(await listRuns(deps, "default", 5)).toHaveLength(1);
    expect(await listRuns(deps, "other", 5)).toHaveLength(0);
  });

  it("POST /api/cron?fanout=1 is the scheduled tick (fanning out past CRON_INLINE_AGENTS); plain POST /api/cron runs the ticks inline", async () => {
    const flaky = new FlakyScheduler();
    flaky.down = false;
    const deps = await createTestDeps({ scheduler: flaky, vars: { CRON_INLINE_AGENTS: "0" } });
    const app = buildApp(() => deps);
    const fanned = await app.request("/api/cron?fanout=1", { method: "POST", headers: authHeaders() });
    expect(await fanned.json()).toEqual({ inline: [], fannedOut: ["default"], ran: [], schedulerFailing: false });
    expect(flaky.published.map((p) => p.body.type)).toEqual(["tick"]);
    const inline = await app.request("/api/cron", { method: "POST", headers: authHeaders() });
    expect(await inline.json()).toEqual({
      agents: [{ agentId: "default", recoveredLease: false, requestedRun: false, republishedRun: false }],
    });
    expect((await app.request("/api/cron?fanout=yes", { method: "POST", headers: authHeaders() })).status).toBe(400);
  });
});
