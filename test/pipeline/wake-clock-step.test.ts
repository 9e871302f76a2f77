/**
 * A promised re-check and a wall clock stepped back (issue #37 item 8: "a promised re-check is
 * delayed by a backward clock step"). Wakes are due at wall-clock times; the cron tick notices a
 * backward step by monotonic time (runtime/clock.ts wallSteppedBack, FakeClock.stepWall as a host
 * sees an NTP step or `date -s`) and moves pending wakes back by the step, so a check promised in
 * 10 minutes still runs 10 minutes later. Each step moves them once; a forward step moves nothing.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createWake, listRuns } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { runScheduledTick } from "../../jobs/scheduled-tick.ts";
import { wakes } from "../../schema/index.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { advance, deliverDue } from "../support/drive.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe("a wake and a backward step of the wall clock", () => {
  it("a check promised in 10 minutes runs 10 minutes later although the wall clock stepped back an hour", async () => {
    const deps = await createTestDeps();
    await runCronTick(deps); // the host ticks every minute: the step is measured from the last tick
    const wake = await createWake(deps, "default", {
      dueAt: deps.clock.now() + 10 * MINUTE,
      reason: "see that sim-1 is back",
      createdByRun: 2,
    });

    deps.clock.advance(2 * MINUTE);
    deps.clock.stepWall(-HOUR);
    // The ticks of the next 8 minutes (the host's interval), then the delivery due by then.
    for (let i = 0; i < 8; i++) {
      await runCronTick(deps);
      await advance(deps, MINUTE);
    }
    await runCronTick(deps);
    await deliverDue(deps);
    const [row] = await deps.db.select().from(wakes).where(eq(wakes.id, wake.id));
    expect(row).toMatchObject({ status: "consumed", dueAt: wake.dueAt - HOUR });
    expect((await listRuns(deps, "default", 10)).map((r) => r.wakesConsumed)).toContainEqual([wake.id]);
  });

  it("is moved once per step, never early, and not at all by a forward step", async () => {
    const deps = await createTestDeps();
    await runCronTick(deps);
    const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 10 * MINUTE, reason: "later", createdByRun: 2 });
    const row = async () => (await deps.db.select().from(wakes).where(eq(wakes.id, wake.id)))[0]!;

    deps.clock.stepWall(-HOUR);
    await runCronTick(deps);
    await runCronTick(deps);
    expect((await row()).dueAt).toBe(wake.dueAt - HOUR);
    // 9 minutes on, the check promised in 10 is not due yet.
    deps.clock.advance(9 * MINUTE);
    await runCronTick(deps);
    await deliverDue(deps);
    expect((await row()).status).toBe("pending");

    deps.clock.stepWall(30_000); // forward: nothing moves (it can only make the check early)
    await runCronTick(deps);
    expect((await row()).dueAt).toBe(wake.dueAt - HOUR);
    deps.clock.advance(MINUTE);
    await runCronTick(deps);
    await deliverDue(deps);
    deps.clock.advance(deps.config.debounceStateMs);
    await deliverDue(deps);
    expect((await row()).status).toBe("consumed");
  });

  it("the host's scheduled tick (the Node interval) moves them too", async () => {
    const deps = await createTestDeps();
    await runScheduledTick(deps);
    const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 10 * MINUTE, reason: "later", createdByRun: 2 });
    deps.clock.advance(MINUTE);
    deps.clock.stepWall(-HOUR);
    await runScheduledTick(deps);
    expect((await deps.db.select().from(wakes).where(eq(wakes.id, wake.id)))[0]!.dueAt).toBe(wake.dueAt - HOUR);
  });
});
