import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { listRuns } from "../../pipeline/index.ts";
import { authHeaders, createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";
import { advance, deliverDue } from "../support/drive.ts";

const human = (n: number) => ({
  agentId: "default",
  source: "human" as const,
  priority: 0 as const,
  dedupKey: `m${n}`,
  payload: { text: `hello ${n}` },
});
const state = (n: number) => ({ agentId: "default", source: "webhook" as const, priority: 1 as const, dedupKey: `w${n}`, payload: { n } });

describe("ingest and debounce", () => {
  it("POST /messages stores one event and answers 202 {eventId}; the same Idempotency-Key is stored once", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const send = () =>
      app.request("/api/agents/default/messages", {
        method: "POST",
        headers: authHeaders({ "Idempotency-Key": "msg-1" }),
        body: JSON.stringify({ text: "restart sim-2 please" }),
      });
    const first = await send();
    expect(first.status).toBe(202);
    const { eventId } = await first.json();
    expect(eventId).toBeTypeOf("number");
    const again = await send();
    expect(await again.json()).toEqual({ eventId, duplicate: true });
    const rs = await deps.db.$client.execute("select count(*) as n from events");
    expect(Number(rs.rows[0]!.n)).toBe(1);
  });

  it("POST /trigger is a priority-0 event with an optional reason", async () => {
    const deps = await createTestDeps();
    const app = buildApp(() => deps);
    const res = await app.request("/api/agents/default/trigger", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ reason: "check now" }),
    });
    expect(res.status).toBe(202);
    const scheduler = deps.scheduler as RecordingScheduler;
    expect(scheduler.published).toHaveLength(1);
    expect(scheduler.published[0]!.notBefore).toBe(deps.clock.now() + 2000);
    const bad = await app.request("/api/agents/default/trigger", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ reason: 5 }),
    });
    expect(bad.status).toBe(400);
  });

  it("a burst of N events inside one window gives exactly one run that consumes them all", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    for (let i = 0; i < 50; i++) {
      await ingestEvent(deps, human(i));
      deps.clock.advance(20);
    }
    expect(scheduler.published).toHaveLength(1);
    await advance(deps, 2000);
    const runs = await listRuns(deps, "default", 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.triggers).toHaveLength(50);
    expect(scheduler.published).toHaveLength(0);
  });

  it("a scheduled run at or before now+window absorbs a new event; a human event pulls a state run forward", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    const t0 = deps.clock.now();
    await ingestEvent(deps, state(1));
    expect(scheduler.published.map((p) => p.notBefore)).toEqual([t0 + 10_000]);
    deps.clock.advance(1000);
    await ingestEvent(deps, human(1));
    expect(scheduler.published.map((p) => p.notBefore)).toEqual([t0 + 10_000, t0 + 3000]);
    deps.clock.advance(500);
    await ingestEvent(deps, state(2)); // now+10s is later than the scheduled run: absorbed
    expect(scheduler.published).toHaveLength(2);

    await advance(deps, 1500); // t0+3000: the pulled-forward run
    let runs = await listRuns(deps, "default", 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.triggers.map((t) => t.source).sort()).toEqual(["human", "webhook", "webhook"]);
    await advance(deps, 7000); // the superseded slot's delivery arrives and does nothing
    runs = await listRuns(deps, "default", 10);
    expect(runs).toHaveLength(1);
  });

  it("a delivery that arrives early is re-published for the due time", async () => {
    const deps = await createTestDeps();
    const scheduler = deps.scheduler as RecordingScheduler;
    await ingestEvent(deps, human(1));
    const [delivery] = scheduler.takeDue(Number.MAX_SAFE_INTEGER);
    const { handleDelivery } = await import("../../jobs/deliver.ts");
    expect(await handleDelivery(deps, delivery!.body)).toBe("early");
    expect(scheduler.published[0]!.notBefore).toBe(delivery!.notBefore);
    await advance(deps, 2000);
    expect(await listRuns(deps, "default", 5)).toHaveLength(1);
    expect(await deliverDue(deps)).toEqual([]);
  });
});
