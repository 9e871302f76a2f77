/**
 * Invariant 9, bounded retries: an event or wake handed back by failed or crashed runs
 * MAX_EVENT_ATTEMPTS times is dropped as poison by the next claim (never attempted again), the
 * API shows why, and a human is told exactly once, with how often and the last error.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { events, notifications, runs, wakes } from "../../schema/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { createWake } from "../../pipeline/index.ts";
import { runCronTick } from "../../jobs/tick.ts";
import { deliverDue } from "../support/drive.ts";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";

async function alwaysFailing(vars: Record<string, string> = {}) {
  let attempts = 0;
  const deps = await createTestDeps({
    vars: { SIMULATOR_INSTANCES: "0", ...vars },
    runStep: async () => {
      attempts++;
      throw new Error(`step failure #${attempts}`);
    },
  });
  return { deps, attempts: () => attempts };
}

/** Lets the pipeline retry (failed runs schedule their retry one state window later) until idle. */
async function settle(deps: TestDeps) {
  for (let i = 0; i < 20; i++) {
    deps.clock.advance(deps.config.debounceStateMs);
    await deliverDue(deps);
  }
}

describe("poison events", () => {
  it("drops an event after MAX_EVENT_ATTEMPTS failed runs and tells a human once", async () => {
    const { deps, attempts } = await alwaysFailing();
    await ingestEvent(deps, { agentId: "default", source: "manual", priority: 0, dedupKey: "t1", payload: { reason: "boom" } });
    await settle(deps);

    expect(attempts()).toBe(3);
    const [event] = await deps.db.select().from(events);
    expect(event).toMatchObject({ status: "dropped", dropReason: "poison", attempts: 3 });
    const statuses = (await deps.db.select().from(runs).orderBy(runs.runId)).map((r) => r.status);
    expect(statuses).toEqual(["failed", "failed", "failed", "skipped"]);

    const app = buildApp(() => deps);
    const listed = await (await app.request("/api/agents/default/events?status=dropped", { headers: authHeaders() })).json();
    expect(listed.events).toMatchObject([{ id: event!.id, status: "dropped", dropReason: "poison", attempts: 3 }]);

    await runCronTick(deps);
    await runCronTick(deps);
    deps.clock.advance(2 * deps.config.notifyDedupWindowMs);
    await runCronTick(deps);
    // The poison reaches a human once: the item's alert. The watchdog lists its poison condition
    // (health route) without telling it again; it still tells its own "runs keep failing".
    const all = await deps.db.select().from(notifications);
    expect(all.filter((n) => n.dedupKey.startsWith("watchdog:failed_runs"))).toHaveLength(1);
    const sent = all.filter((n) => /poison/i.test(`${n.dedupKey} ${n.title}`));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.dedupKey).toBe(`poison:event:${event!.id}`);
    expect(sent[0]!.body).toMatch(/attempted by 3 runs/);
    expect(sent[0]!.body).toMatch(/Last error: step failure #3/);
    const health = await (await app.request("/api/agents/default/health", { headers: authHeaders() })).json();
    expect(JSON.stringify(health)).toMatch(/"kind":"poison"/);
  });

  it("drops a wake the same way (status dropped)", async () => {
    const { deps, attempts } = await alwaysFailing({ MAX_EVENT_ATTEMPTS: "2" });
    const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 1000, reason: "look again", createdByRun: null });
    await settle(deps);

    expect(attempts()).toBe(2);
    const [row] = await deps.db.select().from(wakes);
    expect(row).toMatchObject({ id: wake.id, status: "dropped", dropReason: "poison", attempts: 2 });
    const app = buildApp(() => deps);
    const listed = await (await app.request("/api/agents/default/wakes?status=dropped", { headers: authHeaders() })).json();
    expect(listed.wakes).toMatchObject([{ id: wake.id, dropReason: "poison", attempts: 2 }]);
    await runCronTick(deps);
    const sent = (await deps.db.select().from(notifications)).filter((n) => n.dedupKey.startsWith("poison:"));
    expect(sent.map((n) => n.dedupKey)).toEqual([`poison:wake:${wake.id}`]);
    expect(sent[0]!.body).toMatch(/Wake #\d+ \(look again\) was attempted by 2 runs/);
  });

  it("an event that fails fewer times than the limit is still retried and consumed", async () => {
    let attempts = 0;
    const deps = await createTestDeps({
      vars: { SIMULATOR_INSTANCES: "0" },
      runStep: async () => {
        if (++attempts < 3) throw new Error("transient");
        return { decider: "none", mutated: false, reply: null, promptTokens: 0, completionTokens: 0, contextTokens: 0, compaction: null };
      },
    });
    await ingestEvent(deps, { agentId: "default", source: "manual", priority: 0, dedupKey: "t1", payload: {} });
    await settle(deps);
    const [event] = await deps.db.select().from(events);
    expect(event).toMatchObject({ status: "consumed", attempts: 2 });
    await runCronTick(deps);
    expect(await deps.db.select().from(notifications)).toHaveLength(0);
  });
});
