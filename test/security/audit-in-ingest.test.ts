/**
 * A chat message's or trigger's activity row is written in the event's own ingest batch: exactly
 * once per stored event, naming that event, never for a repeated Idempotency-Key — also when many
 * requests share one group commit and a repeated key sits in the same group as its original.
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { GroupCommit } from "../../db/group-commit.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";

async function groupedApp() {
  const base = await createTestDeps();
  const groupCommit = new GroupCommit(base.db, { windowMs: 2, maxRequests: 64 });
  const deps = { ...base, groupCommit };
  return { deps, groupCommit, app: buildApp(() => deps) };
}

const activity = async (deps: Awaited<ReturnType<typeof groupedApp>>["deps"]) =>
  (await deps.db.$client.execute("select action, subject, operator_name from operator_activity order by id")).rows.map((r) => ({ ...r }));

describe("the activity row of an ingest", () => {
  it("is written once per stored message or trigger, with its event id, inside one shared group", async () => {
    const { deps, groupCommit, app } = await groupedApp();
    const post = (path: string, key: string, body: unknown) =>
      app.request(`/api/agents/default/${path}`, {
        method: "POST",
        headers: authHeaders({ "Idempotency-Key": key }),
        body: JSON.stringify(body),
      });
    const sent = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => post("messages", `m${i}`, { text: `message ${i}` })),
      post("messages", "m3", { text: "message 3" }),
      post("trigger", "t1", { reason: "look" }),
      post("trigger", "t1", { reason: "look" }),
    ]);
    expect(sent.map((r) => r.status)).toEqual(Array(13).fill(202));
    const bodies = (await Promise.all(sent.map((r) => r.json()))) as { eventId: number; duplicate: boolean }[];
    expect(groupCommit.stats.fallbacks).toBe(0);
    expect(groupCommit.stats.groups).toBeLessThan(13);

    const stored = bodies.filter((b) => !b.duplicate);
    expect(stored).toHaveLength(11);
    const rows = await activity(deps);
    expect(rows).toHaveLength(11);
    expect(rows.map((r) => Number(r.subject)).sort((a, b) => a - b)).toEqual(stored.map((b) => b.eventId).sort((a, b) => a - b));
    expect(rows.filter((r) => r.action === "trigger")).toEqual([
      { action: "trigger", subject: String(bodies[11]!.eventId), operator_name: "admin" },
    ]);
  });

  it("a repeated key sent later writes no activity row", async () => {
    const { deps, app } = await groupedApp();
    const post = () =>
      app.request("/api/agents/default/messages", {
        method: "POST",
        headers: authHeaders({ "Idempotency-Key": "again" }),
        body: JSON.stringify({ text: "hi" }),
      });
    const first = (await (await post()).json()) as { eventId: number };
    expect(await (await post()).json()).toEqual({ eventId: first.eventId, duplicate: true });
    expect(await activity(deps)).toEqual([{ action: "message", subject: String(first.eventId), operator_name: "admin" }]);
  });
});
