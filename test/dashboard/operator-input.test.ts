/**
 * The dashboard's chat and Trigger now go through the API's own ingestion (auth/operator-input.ts):
 * the event and its operator-activity row are written in one batch, so a row exists exactly when
 * its event was stored. A repeated form (same nonce) is one event and one row; an activity row
 * that cannot be written takes its event with it, on the dashboard as on the API.
 */
import { describe, expect, it } from "vitest";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";

const rows = async (deps: TestDeps, sql: string) => (await deps.db.$client.execute(sql)).rows.map((r) => ({ ...r }));
const inbox = (deps: TestDeps) =>
  rows(deps, "select id, source, dedup_key, payload from events where source in ('human', 'manual') order by id");
const activity = (deps: TestDeps) => rows(deps, "select operator_name, action, agent_id, subject from operator_activity order by id");

describe("operator input from the dashboard", () => {
  it("a chat post and its repeats (same nonce, also at once) are one event with one activity row naming it", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    const first = await client.post("/chat", { text: "are the workers up?", nonce: "nonce-chat-0001" });
    expect(first.headers.get("location")).toBe("/chat?done=sent");
    const repeats = await Promise.all(
      Array.from({ length: 4 }, () => client.post("/chat", { text: "are the workers up?", nonce: "nonce-chat-0001" })),
    );
    expect(repeats.map((r) => r.headers.get("location"))).toEqual(Array(4).fill("/chat?done=duplicate"));

    const events = await inbox(deps);
    expect(events).toEqual([
      {
        id: events[0]!.id,
        source: "human",
        dedup_key: "message:dashboard-nonce-chat-0001",
        payload: JSON.stringify({ text: "are the workers up?", operator: "admin", operatorId: 0 }),
      },
    ]);
    expect(await activity(deps)).toEqual([
      { operator_name: "admin", action: "message", agent_id: "default", subject: String(events[0]!.id) },
    ]);
  });

  it("Trigger now: one event and one activity row per nonce", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    for (const nonce of ["nonce-trig-0001", "nonce-trig-0001", "nonce-trig-0002"]) await client.post("/trigger", { back: "/", nonce });
    const events = await inbox(deps);
    expect(events.map((e) => [e.source, e.dedup_key, e.payload])).toEqual([
      ["manual", "trigger:dashboard-nonce-trig-0001", JSON.stringify({ reason: "Trigger now (dashboard)", operator: "admin" })],
      ["manual", "trigger:dashboard-nonce-trig-0002", JSON.stringify({ reason: "Trigger now (dashboard)", operator: "admin" })],
    ]);
    expect((await activity(deps)).map((a) => [a.action, a.subject])).toEqual(events.map((e) => ["trigger", String(e.id)]));
  });

  it("an activity row that cannot be written stores no event either, on the dashboard and the API", async () => {
    const deps = await createTestDeps();
    const client = await dashboardClient(deps);
    await deps.db.$client.execute(
      "create trigger refuse_activity before insert on operator_activity begin select raise(abort, 'activity refused'); end",
    );
    const api = (key: string) =>
      client.app.request("/api/agents/default/messages", {
        method: "POST",
        headers: authHeaders({ "Idempotency-Key": key }),
        body: JSON.stringify({ text: "hello" }),
      });

    expect((await client.post("/chat", { text: "hello", nonce: "nonce-atomic-01" })).status).toBe(500);
    expect((await client.post("/trigger", { back: "/", nonce: "nonce-atomic-02" })).status).toBe(500);
    expect((await api("atomic-03")).status).toBe(500);
    expect(await inbox(deps)).toEqual([]);
    expect(await activity(deps)).toEqual([]);

    // Once the row can be written, the same forms are stored, each with its row.
    await deps.db.$client.execute("drop trigger refuse_activity");
    expect((await client.post("/chat", { text: "hello", nonce: "nonce-atomic-01" })).headers.get("location")).toBe("/chat?done=sent");
    expect((await api("atomic-03")).status).toBe(202);
    const events = await inbox(deps);
    expect(events).toHaveLength(2);
    expect((await activity(deps)).map((a) => a.subject)).toEqual(events.map((e) => String(e.id)));
  });
});
