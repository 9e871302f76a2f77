import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { buildApp } from "../../functions/app.ts";
import { listRuns } from "../../pipeline/index.ts";
import { createTestDeps, type RecordingScheduler, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { advance } from "../support/drive.ts";

const signer = new Webhook(TEST_WEBHOOK_SECRET);

function signed(id: string, body: unknown, options: { secret?: string; at?: Date } = {}) {
  return signedRaw(id, JSON.stringify(body), options);
}

function signedRaw(id: string, raw: string, options: { secret?: string; at?: Date } = {}) {
  const at = options.at ?? new Date();
  const signature = (options.secret ? new Webhook(options.secret) : signer).sign(id, at, raw);
  return {
    method: "POST",
    headers: {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature,
      "content-type": "application/json",
    },
    body: raw,
  };
}

async function count(deps: Awaited<ReturnType<typeof createTestDeps>>, table: string) {
  const rs = await deps.db.$client.execute(`select count(*) as n from ${table}`);
  return Number(rs.rows[0]!.n);
}

async function setup(vars: Record<string, string> = {}) {
  const deps = await createTestDeps({ vars });
  return { deps, app: buildApp(() => deps) };
}

describe("instance webhooks (Standard Webhooks)", () => {
  it("a signed state change is stored once, updates the instance and requests a state-priority run", async () => {
    const { deps, app } = await setup();
    const req = signed("msg_1", { instanceId: "sim-1", state: "exited", message: "exit code 137" });
    const res = await app.request("/webhooks/default/instances", req);
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body).toMatchObject({ duplicate: false, outcome: "pending" });
    const again = await app.request("/webhooks/default/instances", req);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ eventId: body.eventId, duplicate: true });
    expect(await count(deps, "events")).toBe(1);
    expect(await count(deps, "instance_events")).toBe(1);
    const rs = await deps.db.$client.execute("select state, status_message from instances where id = 'sim-1'");
    expect(rs.rows[0]).toMatchObject({ state: "exited", status_message: "exit code 137" });
    expect((deps.scheduler as RecordingScheduler).published[0]!.notBefore).toBe(deps.clock.now() + 10_000);
  });

  it.each([
    ["unsigned", (r: ReturnType<typeof signed>) => ({ ...r, headers: { "content-type": "application/json" } }), 401],
    [
      "signed with another secret",
      () => signed("msg_2", { instanceId: "a", state: "running" }, { secret: `whsec_${btoa("another-secret-entirely!!")}` }),
      401,
    ],
    ["stale (6 minutes old)", () => signed("msg_3", { instanceId: "a", state: "running" }, { at: new Date(Date.now() - 6 * 60_000) }), 401],
    ["from the future", () => signed("msg_4", { instanceId: "a", state: "running" }, { at: new Date(Date.now() + 6 * 60_000) }), 401],
    ["tampered", (r: ReturnType<typeof signed>) => ({ ...r, body: r.body.replace("running", "stopped") }), 401],
    ["an unknown state", () => signed("msg_5", { instanceId: "a", state: "exploded" }), 400],
    ["missing instanceId", () => signed("msg_6", { state: "running" }), 400],
    ["an overlong message", () => signed("msg_7", { instanceId: "a", state: "running", message: "x".repeat(5000) }), 400],
    ["signed but not JSON", () => signedRaw("msg_8", "nope"), 400],
  ])("refuses a webhook that is %s, writing nothing", async (_, make, status) => {
    const { deps, app } = await setup();
    const base = signed("msg_0", { instanceId: "a", state: "running" });
    const res = await app.request("/webhooks/default/instances", make(base));
    expect(res.status).toBe(status);
    expect((await res.json()).error).toBeTruthy();
    expect(await count(deps, "events")).toBe(0);
    expect(await count(deps, "instances")).toBe(0);
  });

  it("a change older than the stored one never moves the instance back", async () => {
    const { deps, app } = await setup();
    const now = deps.clock.now(); // `at` is judged by the server's clock
    await app.request(
      "/webhooks/default/instances",
      signed("m1", { instanceId: "sim-1", state: "running", at: new Date(now).toISOString() }),
    );
    const late = await app.request(
      "/webhooks/default/instances",
      signed("m2", { instanceId: "sim-1", state: "loading", at: new Date(now - 60_000).toISOString() }),
    );
    expect(await late.json()).toMatchObject({ outcome: "superseded" });
    const rs = await deps.db.$client.execute("select state from instances where id = 'sim-1'");
    expect(rs.rows[0]!.state).toBe("running");
    const ev = await deps.db.$client.execute("select status, drop_reason from events order by id");
    expect(ev.rows.map((r) => [r.status, r.drop_reason])).toEqual([
      ["pending", null],
      ["dropped", "superseded"],
    ]);
  });

  it("a report of the state already stored is a heartbeat: it wakes nobody", async () => {
    const { deps, app } = await setup();
    await app.request("/webhooks/default/instances", signed("h1", { instanceId: "sim-1", state: "running" }));
    await advance(deps, 10_000);
    deps.clock.advance(60_000);
    const beat = await app.request("/webhooks/default/instances", signed("h2", { instanceId: "sim-1", state: "running" }));
    expect(await beat.json()).toMatchObject({ outcome: "unchanged" });
    expect((deps.scheduler as RecordingScheduler).published).toHaveLength(0);
    expect(await listRuns(deps, "default", 5)).toHaveLength(1);
  });

  it("100 signed state webhooks sent at once give one run", async () => {
    // 100 ids no provider lists: webhook-only instances, so the cap is raised to keep them all.
    const { deps, app } = await setup({ WEBHOOK_ONLY_INSTANCES_MAX: "100" });
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        app.request("/webhooks/default/instances", signed(`burst_${i}`, { instanceId: `gpu-${i}`, state: "exited" })),
      ),
    );
    expect(responses.every((r) => r.status === 202)).toBe(true);
    expect(await advance(deps, 10_000)).toEqual(["succeeded"]);
    const runs = await listRuns(deps, "default", 5);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.triggers).toHaveLength(100);
  });

  it("404s for an unknown agent after verifying, writing nothing", async () => {
    const { deps, app } = await setup();
    const res = await app.request("/webhooks/ghost/instances", signed("g1", { instanceId: "a", state: "running" }));
    expect(res.status).toBe(404);
    expect(await count(deps, "events")).toBe(0);
  });
});
