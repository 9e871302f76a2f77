/**
 * The loop watchdog: each condition (events waiting too long, failed runs in a row, poison,
 * compaction/budget failures, the LLM breaker open, a notification storm for one instance, the
 * wake budget exhausted) is noticed by the cron tick, tells a human once when it starts and once
 * when it clears, and is listed by GET /api/agents/:agent/health and the dashboard's overview.
 */
import { describe, expect, it } from "vitest";
import { like } from "drizzle-orm";
import { breakers, events, notifications, runs } from "../../schema/index.ts";
import { buildApp } from "../../functions/app.ts";
import { watchLoop } from "../support/one-check.ts";
import { llmBreakerName } from "../../agent/llm/breaker.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { scheduleSelfWake } from "../../pipeline/index.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { runCronTick } from "../../jobs/tick.ts";
import type { ChatModel } from "../../agent/llm/chat-model.ts";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { deliverDue } from "../support/drive.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";

const health = async (deps: TestDeps) =>
  (await buildApp(() => deps).request("/api/agents/default/health", { headers: authHeaders() })).json();
const watchdogAlerts = (deps: TestDeps) =>
  deps.db.select().from(notifications).where(like(notifications.title, "Watchdog%")).orderBy(notifications.id);

const run = (deps: TestDeps, runId: number, status: string, error: string | null = null) =>
  deps.db
    .insert(runs)
    .values({ agentId: "default", runId, status, sessionEpoch: 1, error, startedAt: deps.clock.now(), finishedAt: deps.clock.now() });

describe("watchdog", () => {
  it("events waiting past twice their window plus a tick: told once on start, once on clear, listed by /health", async () => {
    const deps = await createTestDeps();
    expect(await health(deps)).toEqual({ ok: true, conditions: [], llm: null });
    await ingestEvent(deps, { agentId: "default", source: "webhook", priority: 1, dedupKey: "e1", payload: {} });
    deps.clock.advance(80_000); // 2 × 10 s + 60 s: not yet
    expect((await watchLoop(deps, "default")).started).toEqual([]);
    deps.clock.advance(1_000);
    expect((await watchLoop(deps, "default")).started).toEqual(["events_waiting"]);
    await watchLoop(deps, "default");
    const body = await health(deps);
    expect(body).toEqual({
      ok: false,
      conditions: [
        {
          kind: "events_waiting",
          since: new Date(deps.clock.now()).toISOString(),
          detail: expect.stringMatching(/^1 event\(s\) waiting longer than twice their debounce window plus a tick/),
        },
      ],
      llm: null,
    });
    expect((await watchdogAlerts(deps)).map((n) => n.title)).toEqual(["Watchdog: events are waiting too long for a run"]);

    await deliverDue(deps); // the run finally happens
    expect((await watchLoop(deps, "default")).cleared).toEqual(["events_waiting"]);
    await watchLoop(deps, "default");
    expect(await health(deps)).toEqual({ ok: true, conditions: [], llm: null });
    expect((await watchdogAlerts(deps)).map((n) => n.title)).toEqual([
      "Watchdog: events are waiting too long for a run",
      "Watchdog cleared: events are waiting too long for a run",
    ]);
  });

  it("WATCHDOG_FAILED_RUNS failed or crashed runs in a row; a success clears it", async () => {
    const deps = await createTestDeps({ vars: { WATCHDOG_FAILED_RUNS: "3" } });
    await run(deps, 1, "failed", "boom");
    await run(deps, 2, "crashed");
    expect((await watchLoop(deps, "default")).started).toEqual([]);
    await run(deps, 3, "failed", "boom again");
    expect((await watchLoop(deps, "default")).started).toEqual(["failed_runs"]);
    expect((await health(deps)).conditions[0].detail).toMatch(
      /the last 3 runs failed or crashed \(runs 3, 2, 1; latest error: boom again\)/,
    );
    await run(deps, 4, "succeeded");
    expect((await watchLoop(deps, "default")).cleared).toEqual(["failed_runs"]);
  });

  it("poison events, compaction failures, and the LLM breaker open", async () => {
    const deps = await createTestDeps();
    deps.llm = {
      model: "m",
      complete: async () => {
        throw new Error("unused");
      },
    } satisfies ChatModel;
    await deps.db.insert(events).values({
      agentId: "default",
      source: "webhook",
      priority: 1,
      dedupKey: "p",
      payload: {},
      status: "dropped",
      dropReason: "poison",
      attempts: 3,
      createdAt: deps.clock.now(),
    });
    await run(deps, 1, "succeeded", "compaction could not summarise (timeout); trimmed instead");
    await deps.db
      .insert(breakers)
      .values({ name: llmBreakerName("default", "m"), failures: 3, openUntil: deps.clock.now() + 30_000, updatedAt: deps.clock.now() });
    expect((await watchLoop(deps, "default")).started.sort()).toEqual(["context_budget", "llm_breaker_open", "poison"]);
    deps.clock.advance(31_000);
    expect((await watchLoop(deps, "default")).cleared).toEqual(["llm_breaker_open"]);
    deps.clock.advance(3_600_000);
    expect((await watchLoop(deps, "default")).cleared).toEqual(["context_budget"]);
    deps.clock.advance(24 * 3_600_000);
    expect((await watchLoop(deps, "default")).cleared).toEqual(["poison"]);
  });

  it("more than WATCHDOG_NOTIFY_PER_HOUR notifications or approvals for one instance in an hour", async () => {
    const deps = await createTestDeps({ vars: { WATCHDOG_NOTIFY_PER_HOUR: "3" } });
    for (let i = 0; i < 4; i++) {
      await notifyHuman(deps, {
        agentId: "default",
        runId: null,
        title: `alert ${i}`,
        body: "b",
        severity: "warning",
        instanceId: "sim-1",
      });
      await notifyHuman(deps, {
        agentId: "default",
        runId: null,
        title: `other ${i}`,
        body: "b",
        severity: "warning",
        instanceId: i < 3 ? "sim-2" : null,
      });
    }
    expect((await watchLoop(deps, "default")).started).toEqual(["notification_storm"]);
    expect((await health(deps)).conditions[0].detail).toBe("more than 3 notifications or approvals in an hour for sim-1 (4)");
  });

  it("a storm spread over many instances is a storm of the agent: more than NOTIFICATIONS_PER_HOUR + APPROVALS_PER_HOUR", async () => {
    const deps = await createTestDeps({ vars: { WATCHDOG_NOTIFY_PER_HOUR: "5", NOTIFICATIONS_PER_HOUR: "6", APPROVALS_PER_HOUR: "4" } });
    // Two notices each for 10 instances: no instance is stormy, the agent is (20 > 10).
    for (let i = 0; i < 20; i++) {
      await notifyHuman(deps, {
        agentId: "default",
        runId: null,
        title: `alert ${i}`,
        body: "b",
        severity: "warning",
        instanceId: `sim-${i % 10}`,
      });
      if (i === 9) expect((await watchLoop(deps, "default")).started).toEqual([]);
    }
    expect((await watchLoop(deps, "default")).started).toEqual(["notification_storm"]);
    expect((await health(deps)).conditions[0].detail).toBe("more than 10 notifications or approvals in an hour across the agent (20)");
    deps.clock.advance(3_600_000);
    expect((await watchLoop(deps, "default")).cleared).toEqual(["notification_storm"]);
  });

  it("the wake budget exhausted", async () => {
    const deps = await createTestDeps({ vars: { WAKES_PER_HOUR: "2" } });
    await scheduleSelfWake(deps, "default", { dueAt: deps.clock.now() + 600_000, reason: "a", createdByRun: 1 });
    expect((await watchLoop(deps, "default")).started).toEqual([]);
    await scheduleSelfWake(deps, "default", { dueAt: deps.clock.now() + 600_000, reason: "b", createdByRun: 1 });
    expect((await watchLoop(deps, "default")).started).toEqual(["wake_budget_exhausted"]);
  });

  it("runs in the cron tick, and the dashboard overview shows the conditions", async () => {
    const deps = await createTestDeps({ vars: { WATCHDOG_FAILED_RUNS: "1" } });
    const client = await dashboardClient(deps);
    expect((await client.page("/")).html).toContain('data-health="ok"');
    await run(deps, 1, "crashed");
    await runCronTick(deps);
    const { html } = await client.page("/");
    expect(html).toContain('data-health="conditions"');
    expect(html).toMatch(/data-condition="failed_runs"/);
    expect(html).toContain("the last 1 runs failed or crashed");
  });
});
