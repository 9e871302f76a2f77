/**
 * The daily digest (fleet/economics/digest-check.ts, digest.ts): nothing before DIGEST_HOUR_UTC
 * or when it is unset; at the hour one message with the last 24 hours' runs and actions, the cost,
 * the idle hours a stop saved and their price, the failures fixed without a human and what waits
 * for a human; never a second one the same UTC day (the bound), again the next day.
 */
import { describe, expect, it } from "vitest";
import { actions, approvals, instances, notifications, runs } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { checkDigest, type DigestReport } from "../../fleet/economics/digest-check.ts";
import { FLEET_CHECKS } from "../../jobs/tick.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";

const HOUR = 3_600_000;
const DAY2 = Date.UTC(2026, 0, 2);

const tick = (deps: TestDeps) => runTickCheck<DigestReport, TestDeps>(deps, "default", checkDigest);
const sent = async (deps: TestDeps) => deps.db.select().from(notifications).orderBy(notifications.id);

async function dayOfWork(deps: TestDeps) {
  const at = (h: number) => DAY2 + h * HOUR;
  await deps.db.insert(instances).values([
    // Stopped idle by the rules at 03:00 and still stopped: compute $2/h minus $0.10/h storage saved.
    {
      agentId: "default",
      id: "idle-1",
      state: "stopped",
      stateAt: at(3),
      lastSeenAt: at(3),
      updatedAt: at(3),
      pricePerHour: 2,
      storagePerHour: 0.1,
    },
    { agentId: "default", id: "crash-1", state: "running", stateAt: at(4), lastSeenAt: at(4), updatedAt: at(4), pricePerHour: 1 },
  ]);
  const action = (id: string, kind: string, decidedBy: string, h: number, status = "succeeded") => ({
    agentId: "default",
    instanceId: id,
    kind,
    decidedBy,
    status,
    idempotencyKey: `${kind}:${id}:${h}`,
    createdAt: at(h),
  });
  await deps.db
    .insert(actions)
    .values([
      action("idle-1", "stop", "rules", 3),
      action("crash-1", "start", "llm", 4),
      action("crash-1", "reboot", "human", 5),
      action("crash-1", "destroy", "llm", 5, "awaiting_approval"),
    ]);
  await deps.db.insert(runs).values([
    { agentId: "default", runId: 1, status: "succeeded", sessionEpoch: 0, startedAt: at(3) },
    { agentId: "default", runId: 2, status: "failed", sessionEpoch: 0, startedAt: at(4) },
  ]);
  await deps.db
    .insert(approvals)
    .values({ agentId: "default", kind: "destroy", instanceId: "crash-1", reason: "gone bad", requestedBy: "llm", createdAt: at(5) });
}

describe("the daily digest", () => {
  it("goes out once at the configured hour with what happened, what it cost, what it saved and what waits", async () => {
    const deps = await createTestDeps({ clock: new FakeClock(DAY2 + 7 * HOUR + 59 * 60_000), vars: { DIGEST_HOUR_UTC: "8" } });
    await dayOfWork(deps);
    expect(await tick(deps)).toEqual({ status: "not yet" });
    expect(await sent(deps)).toHaveLength(0);

    deps.clock.set(DAY2 + 8 * HOUR);
    const report = await tick(deps);
    expect(report).toMatchObject({
      status: "sent",
      figures: {
        runs: 2,
        actionsWithoutHuman: 2,
        actionsByHumans: 1,
        idleHoursStopped: 5,
        savedUsd: 9.5,
        failuresFixed: 1,
        pendingApprovals: 1,
      },
    });
    const [digest] = await sent(deps);
    expect(digest!.title).toBe(
      "Daily digest: $" +
        (report as { figures: { spentTodayUsd: number } }).figures.spentTodayUsd.toFixed(2) +
        " today, $9.50 saved, 1 approval waiting",
    );
    expect(digest!.body).toContain("2 runs (1 failed)");
    expect(digest!.body).toContain("after stopping idle-1, about $9.50");
    expect(digest!.body).toContain("crash-1 (start)");
    expect(digest!.body).toMatch(/1 approval \(oldest: destroy crash-1, 3 h old\)/);
  });

  it("is bounded to one per agent and UTC day, and comes again the next day", async () => {
    const deps = await createTestDeps({ clock: new FakeClock(DAY2 + 8 * HOUR), vars: { DIGEST_HOUR_UTC: "8" } });
    expect((await tick(deps)).status).toBe("sent");
    for (const minutes of [1, 60, 15 * 60]) {
      deps.clock.set(DAY2 + 8 * HOUR + minutes * 60_000);
      expect(await tick(deps)).toEqual({ status: "sent today" });
    }
    expect(await sent(deps)).toHaveLength(1);
    deps.clock.set(DAY2 + 24 * HOUR + 7 * HOUR);
    expect(await tick(deps)).toEqual({ status: "not yet" });
    deps.clock.set(DAY2 + 24 * HOUR + 9 * HOUR);
    expect((await tick(deps)).status).toBe("sent");
    const all = await sent(deps);
    expect(all).toHaveLength(2);
    expect(all[1]!.body).toContain("Nothing waits for a human.");
  });

  it("is off unless an hour is set, and runs with every tick", async () => {
    const deps = await createTestDeps({ clock: new FakeClock(DAY2 + 23 * HOUR) });
    expect(await tick(deps)).toEqual({ status: "off" });
    expect(await sent(deps)).toHaveLength(0);
    expect(FLEET_CHECKS).toContain(checkDigest);
  });
});
