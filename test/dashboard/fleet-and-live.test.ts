/**
 * The Fleet table (sort, filter, bad view = 400), the instance page, the "simulate failure" form
 * (same CSRF-protected post as every form; bad input writes nothing), live regions on every page
 * rendered for the page they are on, the chat's session divider, and the favicon.
 */
import { describe, expect, it } from "vitest";
import { FAILURES } from "../../fleet/providers/simulated-failures.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { actions, approvals, events, instanceEvents, instances, operatorActivity, simulatorInstances } from "../../schema/index.ts";
import { resetSession } from "../../pipeline/index.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { advance, startDueDelivery } from "../support/drive.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { GatedStep } from "../support/gated-step.ts";
import { dashboardClient } from "./dashboard-client.ts";

async function fleetSetup() {
  const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
  const sim = deps.provider as import("../../fleet/providers/simulator.ts").SimulatorProvider;
  await sim.seed(3);
  await reconcileFleet(deps, "default");
  return { deps, client: await dashboardClient(deps) };
}

const rowIds = (html: string) => [...html.matchAll(/<tr data-instance-id="([^"]+)"/g)].map((m) => m[1]);

describe("fleet page", () => {
  it("injects a failure from its form: the row, the instance page and the attention strip show it", async () => {
    const { deps, client } = await fleetSetup();
    const res = await client.post("/fleet/sim-2/fail", { kind: "oom", back: "/fleet?sort=state" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/fleet?sort=state&done=failure-injected");
    const { html } = await client.page("/fleet?sort=state&done=failure-injected");
    expect(html).toContain('<tr data-instance-id="sim-2" data-state="exited">');
    expect(html).toContain(FAILURES.oom.message);
    expect(html).toContain("Failure injected into the simulated instance");
    const instance = await client.page("/fleet/sim-2");
    expect(instance.html).toContain("running → exited (webhook)");
    expect(instance.html).toContain('action="/fleet/sim-2/fail"');
    expect((await client.page("/")).html).toMatch(/data-testid="attention-instance" data-instance-id="sim-2"/);
    expect((await deps.db.select().from(events)).some((e) => (e.payload as { instanceId?: string }).instanceId === "sim-2")).toBe(true);
  });

  it("refuses a bad failure post with 4xx naming the problem, and writes nothing", async () => {
    const { deps, client } = await fleetSetup();
    const before = await deps.db.select().from(instanceEvents);
    const cases: [string, Record<string, string>, number, RegExp][] = [
      ["/fleet/sim-1/fail", { kind: "meteor" }, 400, /kind: must be one of exit, oom, stuck_loading, host_offline/],
      ["/fleet/sim-404/fail", { kind: "exit" }, 404, /unknown simulated instance: sim-404/],
    ];
    for (const [path, fields, status, error] of cases) {
      const res = await client.post(path, fields);
      expect(res.status).toBe(status);
      expect((await res.json()).error).toMatch(error);
    }
    expect((await client.post("/fleet/sim-1/fail", { kind: "exit" }, { csrf: "forged" })).status).toBe(403);
    expect(await deps.db.select().from(instanceEvents)).toEqual(before);
    expect((await deps.db.select().from(simulatorInstances)).every((i) => i.failure === null)).toBe(true);
  });

  it("takes an operator's action from the instance page, behind the approval rules, once per form", async () => {
    const { deps, client } = await fleetSetup();
    const page = await client.page("/fleet/sim-1");
    expect(page.html).toContain('<option value="destroy">destroy (needs approval)</option>');
    const stop = await client.post("/fleet/sim-1/actions", { kind: "stop", nonce: "stop-nonce-1", confirm: "yes" });
    expect(stop.headers.get("location")).toBe("/fleet/sim-1?done=action-succeeded");
    await client.post("/fleet/sim-1/actions", { kind: "stop", nonce: "stop-nonce-1", confirm: "yes" });
    expect((await deps.provider.get("sim-1"))!.state).toBe("stopped");
    const destroy = await client.post("/fleet/sim-2/actions", { kind: "destroy", nonce: "destroy-nonce-1", confirm: "yes" });
    expect(destroy.headers.get("location")).toBe("/fleet/sim-2?done=action-awaiting-approval");
    expect((await deps.provider.get("sim-2"))!.state).toBe("running");
    const [approval] = await deps.db.select().from(approvals);
    expect(approval).toMatchObject({ kind: "destroy", instanceId: "sim-2", requestedBy: "admin", status: "pending" });
    expect((await deps.db.select().from(actions)).map((a) => [a.kind, a.decidedBy, a.status, a.operator])).toEqual([
      ["stop", "human", "succeeded", "admin"],
      ["destroy", "human", "awaiting_approval", "admin"],
    ]);
    // The instance page names the operator behind the human action, and so does the activity log.
    expect((await client.page("/fleet/sim-1")).html).toMatch(/stop sim-1 — decided by admin/);
    expect((await deps.db.select().from(operatorActivity)).map((r) => [r.operatorName, r.action, r.subject])).toEqual([
      ["admin", "instance_action", "stop sim-1 #1"],
      ["admin", "instance_action", expect.stringMatching(/^destroy sim-2 #\d+$/)],
    ]);
    const bad = await client.post("/fleet/sim-1/actions", { kind: "explode", nonce: "bad-nonce-1" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/kind: must be one of start, stop, reboot, destroy, replace/);
    expect((await client.post("/fleet/ghost/actions", { kind: "stop", nonce: "ghost-nonce-1" })).status).toBe(404);
    expect((await client.post("/fleet/ghost/actions", { kind: "stop", nonce: "ghost-nonce-1", confirm: "yes" })).status).toBe(404);
    expect(await deps.db.select().from(actions)).toHaveLength(2);
  });

  it("sorts by a column, filters by state, and answers a bad view with 400", async () => {
    const { deps, client } = await fleetSetup();
    await deps.db
      .update(instances)
      .set({ pricePerHour: 99 })
      .where((await import("drizzle-orm")).eq(instances.id, "sim-1"));
    await client.post("/fleet/sim-3/fail", { kind: "host_offline" });
    expect(rowIds((await client.page("/fleet")).html)).toEqual(["sim-1", "sim-2", "sim-3"]);
    expect(rowIds((await client.page("/fleet?sort=price&dir=desc")).html)[0]).toBe("sim-1");
    expect(rowIds((await client.page("/fleet?sort=id&dir=desc")).html)).toEqual(["sim-3", "sim-2", "sim-1"]);
    const offline = await client.page("/fleet?state=offline");
    expect(rowIds(offline.html)).toEqual(["sim-3"]);
    expect(offline.html).toContain('<option value="offline" selected="">');
    expect(offline.html).toContain('aria-sort="ascending"');
    const bad = await client.get("/fleet?sort=colour");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^invalid fleet view: sort: must be one of id, state, since, lastSeen, price/);
    expect((await client.get("/fleet/ghost")).status).toBe(404);
  });
});

describe("live everywhere", () => {
  it("renders the fleet table for the page's own view, and approvals, notifications and badges", async () => {
    const { deps, client } = await fleetSetup();
    await client.post("/fleet/sim-1/fail", { kind: "exit" });
    const live = async (parts: string, page: string) => (await client.get(`/live?parts=${parts}&page=${encodeURIComponent(page)}`)).json();
    const filtered = await live("fleet-table,fleet-summary", "/fleet?state=exited");
    expect(rowIds(filtered.html["fleet-table"])).toEqual(["sim-1"]);
    expect(filtered.html["fleet-summary"]).toContain("3 instances: 2 running, 1 exited");
    expect(filtered.at).toBe(new Date(deps.clock.now()).toISOString());

    const { approvalId } = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "d-2",
    });
    await notifyHuman(deps, { agentId: "default", runId: null, title: "sim-1 exited", body: "exited", severity: "warning" });
    const parts = await live("approvals,notifications,badge-approvals,badge-attention,attention,charts,instance", "/fleet/sim-1");
    expect(parts.html.approvals).toContain(`id="approval-${approvalId}"`);
    expect(parts.html.approvals).toContain(`name="_csrf" value="${client.csrf}"`);
    expect(parts.html.notifications).toContain("sim-1 exited");
    expect(parts.html["badge-approvals"]).toContain("> 1<");
    expect(parts.html["badge-attention"]).toContain("> 2<");
    expect(parts.html.attention).toContain('data-instance-id="sim-1"');
    expect(parts.html.charts).toContain('data-chart="activity-chart"');
    expect(parts.html.instance).toContain("running → exited (webhook)");
    expect((await client.get("/live?parts=state&page=https%3A%2F%2Fevil.example%2F")).status).toBe(400);
  });

  it("updates a running run's page, and marks every page live through the navigation badges", async () => {
    const gate = new GatedStep();
    const deps = await createTestDeps({ runStep: gate.step });
    const client = await dashboardClient(deps);
    await ingestEvent(deps, { agentId: "default", source: "manual", priority: 0, dedupKey: "t-1", payload: { reason: "look" } });
    deps.clock.advance(deps.config.debounceHumanMs);
    const { done } = await startDueDelivery(deps);
    const running = await client.page("/runs/1");
    expect(running.html).toContain('<div data-live="run">');
    expect(running.html).toContain(">running<");
    gate.open();
    await done;
    const live = await (await client.get(`/live?parts=run&page=${encodeURIComponent("/runs/1")}`)).json();
    expect(live.html.run).toContain(">succeeded<");
    expect((await client.page("/runs/1")).html).not.toContain('data-live="run"');
    for (const path of ["/", "/fleet", "/runs", "/runs/1", "/wakes", "/notifications", "/approvals", "/chat"]) {
      expect((await client.page(path)).html, path).toContain('data-live="badge-approvals"');
    }
  });
});

describe("chat and small things", () => {
  it("marks a session reset in the thread with its epoch and time, and links each reply's run", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    await client.post("/chat", { text: "before the reset", nonce: "nonce-before" });
    await advance(deps, deps.config.debounceHumanMs);
    await resetSession(deps, "default");
    let html = (await client.page("/chat")).html;
    expect(html).toMatch(
      /before the reset[\s\S]*data-testid="session-divider" data-epoch="2">New session \(epoch 2\) started by a session reset at 2026-/,
    );
    await client.post("/chat", { text: "after the reset", nonce: "nonce-after" });
    await advance(deps, deps.config.debounceHumanMs);
    html = (await client.page("/chat")).html;
    expect(html).toMatch(/before the reset[\s\S]*href="\/runs\/1"[\s\S]*session-divider[\s\S]*after the reset[\s\S]*href="\/runs\/2"/);
    expect(html.match(/data-testid="session-divider"/g)).toHaveLength(1);
  });

  it("serves a favicon, linked from every page", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    for (const path of ["/favicon.ico", "/favicon.svg"]) {
      const res = await client.app.request(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("image/svg+xml");
      expect(await res.text()).toContain("<svg");
    }
    expect((await client.page("/")).html).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml"/>');
  });
});
