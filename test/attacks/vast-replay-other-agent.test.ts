/**
 * Attack: a Vast.ai notification signed for one agent's route (captured from a proxy log, or
 * resent within the 300 s signature window) is replayed onto another agent's route: every agent's
 * route checks the one deployment VAST_WEBHOOK_SECRET, so it verifies there too and that agent
 * takes the hint (its reconcile turn given back, a run requested) for an account it does not watch.
 * Guard: fleet/providers/vast-notification.ts binds an event id to the first agent that stored it
 * (one Vast webhook points at one agent): the same X-Vast-Event-Id on another agent's route is a
 * 409 naming the agent it belongs to, nothing written; the owner's own repeat is still 200 duplicate.
 */
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { agents } from "../../schema/index.ts";
import { authHeaders, createTestDeps } from "../support/test-deps.ts";
import { TEST_VAST_SECRET, vastDelivery, vastPayload } from "../support/vast-webhook.ts";

describe("a Vast.ai notification replayed onto another agent's route", () => {
  it("is refused 409 and writes nothing; the owner's repeat is a duplicate", async () => {
    const deps = await createTestDeps({ vars: { VAST_WEBHOOK_SECRET: TEST_VAST_SECRET } });
    const app = buildApp(() => deps);
    const created = await app.request("/api/agents", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ id: "team-b", settings: {} }),
    });
    expect(created.status).toBe(201);
    await deps.db.update(agents).set({ lastReconciledAt: 1_000 });
    const delivery = vastDelivery(vastPayload(), { nowMs: deps.clock.now() });
    expect((await app.request("/webhooks/default/vast", delivery)).status).toBe(202);
    const count = async () => Number((await deps.db.$client.execute("select count(*) as n from events")).rows[0]!.n);
    const before = await count();

    const replay = await app.request("/webhooks/team-b/vast", delivery);
    expect(replay.status).toBe(409);
    expect(((await replay.json()) as { error: string }).error).toMatch(/belongs to agent default/);
    expect(await count()).toBe(before);
    const [teamB] = await deps.db.select({ at: agents.lastReconciledAt }).from(agents).where(eq(agents.id, "team-b"));
    expect(teamB!.at).toBe(1_000);

    expect((await app.request("/webhooks/default/vast", delivery)).status).toBe(200);
  });
});
