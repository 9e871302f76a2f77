/**
 * Every human decision names its operator: chat messages and triggers (the event payload),
 * approval decisions (the approval, the action it ran, the event telling the agent), resets, and
 * the activity log that holds them all; the dashboard shows them (approvals page, operators page).
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { actions, approvals, events } from "../../schema/index.ts";
import { fleetFixture } from "../actions/fleet-fixture.ts";
import { dashboardClient } from "../dashboard/dashboard-client.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

describe("the audit names the operator", () => {
  it("for chat, trigger, reset and an approved destroy, through the API and on the dashboard", async () => {
    const { deps } = await fleetFixture();
    const { token } = await createOperator(deps.db, { name: "ana", role: "operator", createdBy: "admin", now: deps.clock.now() });
    const app = buildApp(() => deps);
    const as = (path: string, body?: unknown) =>
      app.request(path, {
        method: body === undefined ? "GET" : "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    expect((await as("/api/agents/default/messages", { text: "status?" })).status).toBe(202);
    expect((await as("/api/agents/default/trigger", { reason: "look now" })).status).toBe(202);
    expect((await as("/api/agents/default/session/reset", {})).status).toBe(200);
    const requested = await executeAction(deps, {
      agentId: "default",
      runId: 3,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "run3:destroy:sim-2",
      reason: "crash-looping",
    });
    const decided = await as(`/api/agents/default/approvals/${requested.approvalId}`, { decision: "approve", note: "go" });
    expect(decided.status).toBe(200);

    const payloads = (await deps.db.select().from(events)).filter((e) => ["human", "manual", "approval"].includes(e.source));
    expect(payloads.map((e) => [e.source, (e.payload as { operator?: string }).operator])).toEqual([
      ["human", "ana"],
      ["manual", "ana"],
      ["approval", "ana"],
    ]);
    const [approval] = await deps.db.select().from(approvals).where(eq(approvals.id, requested.approvalId!));
    expect(approval!.decidedBy).toBe("ana");
    const ran = await deps.db.select().from(actions).where(eq(actions.decidedBy, "human"));
    expect(ran.map((a) => [a.kind, a.operator])).toEqual([["destroy", "ana"]]);
    expect(
      (await (await as("/api/agents/default/actions")).json()).actions.find((a: { decidedBy: string }) => a.decidedBy === "human"),
    ).toMatchObject({ operator: "ana" });
    expect((await (await as("/api/agents/default/approvals")).json()).approvals[0]).toMatchObject({ decidedBy: "ana" });

    const admin = await dashboardClient(deps, TEST_ADMIN_TOKEN);
    const listed = await app.request("/api/operators", { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const activity = (await listed.json()).activity as { operator: string; action: string }[];
    expect(activity.map((a) => [a.operator, a.action]).reverse()).toEqual([
      ["ana", "message"],
      ["ana", "trigger"],
      ["ana", "reset"],
      ["ana", "approve"],
    ]);
    const operatorsPage = (await admin.page("/operators")).html;
    expect(operatorsPage).toMatch(/ana · approve · default · \d+/);
    expect(operatorsPage).toContain("ana · reset · default · epoch 2");
    expect((await admin.page("/approvals")).html).toContain("decided by ana");
  });
});
