import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { listRuns } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { authHeaders, createTestDeps, FlakyScheduler, type RecordingScheduler } from "../support/test-deps.ts";
import { advance } from "../support/drive.ts";

describe("cron tick", () => {
  it("a quiet tick publishes nothing and starts no run", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    await ingestEvent(deps, { agentId: "default", source: "manual", priority: 0, dedupKey: "t1", payload: {} });
    await advance(deps, 2000);
    deps.clock.advance(120_000);
    const app = buildApp(() => deps);
    const res = await app.request("/api/cron", { method: "POST", headers: authHeaders() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      agents: [{ agentId: "default", recoveredLease: false, requestedRun: false, republishedRun: false }],
    });
    expect(scheduler.published).toHaveLength(0);
    expect(await listRuns(deps, "default", 5)).toHaveLength(1);
  });

  it("requests a run for an event whose publish failed, so nothing is lost", async () => {
    const flaky = new FlakyScheduler();
    const deps = await createTestDeps({ scheduler: flaky });
    const { eventId } = await ingestEvent(deps, {
      agentId: "default",
      source: "human",
      priority: 0,
      dedupKey: "m1",
      payload: { text: "hi" },
    });
    expect(eventId).toBe(1);
    flaky.down = false;
    deps.clock.advance(2000 + 60_000); // the scheduled run is now a minute overdue
    const [report] = await runCronTick(deps);
    expect(report).toMatchObject({ republishedRun: true });
    for (const p of flaky.takeDue(deps.clock.now())) {
      const { handleDelivery } = await import("../../jobs/deliver.ts");
      expect(await handleDelivery(deps, p.body)).toBe("succeeded");
    }
    const [run] = await listRuns(deps, "default", 1);
    expect(run!.triggers).toEqual([{ source: "human", id: 1 }]);
  });

  it("does not interfere with a live run", async () => {
    const deps = await createTestDeps();
    const { claimRun } = await import("../../pipeline/index.ts");
    await ingestEvent(deps, { agentId: "default", source: "manual", priority: 0, dedupKey: "t1", payload: {} });
    deps.clock.advance(2000);
    const [delivery] = (deps.scheduler as RecordingScheduler).takeDue(deps.clock.now());
    const claim = await claimRun(deps, "default", (delivery!.body as { slot: number }).slot);
    expect(claim.kind).toBe("claimed");
    await ingestEvent(deps, { agentId: "default", source: "manual", priority: 0, dedupKey: "t2", payload: {} });
    deps.clock.advance(120_000);
    const [report] = await runCronTick(deps);
    expect(report).toEqual({ agentId: "default", recoveredLease: false, requestedRun: false, republishedRun: false });
  });
});
