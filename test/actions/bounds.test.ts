/**
 * The run and hour bounds (fleet/actions/bounds.ts, notify/notification-bounds.ts) and shadow mode, through
 * executeAction, requestApproval's path and notifyHuman on real libSQL: past a bound the attempt
 * is recorded as refused with its reason, nothing reaches the provider or a channel, and a human
 * is told once per run however often the run hits the bound.
 */
import { describe, expect, it } from "vitest";
import { and, eq, like } from "drizzle-orm";
import { executeAction } from "../../fleet/actions/actions.ts";
import { listActions } from "../../fleet/actions/actions.ts";
import type { ActionRequest } from "../../fleet/actions/action-types.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { actions, approvals, notifications, onceNotices } from "../../schema/index.ts";
import { authHeaders, type TestDeps } from "../support/test-deps.ts";
import { buildApp } from "../../functions/app.ts";
import { fleetFixture } from "./fleet-fixture.ts";

const act = (
  runId: number | null,
  instanceId: string,
  kind: ActionRequest["kind"],
  decidedBy: ActionRequest["decidedBy"] = "llm",
): ActionRequest => ({
  agentId: "default",
  runId,
  instanceId,
  kind,
  decidedBy,
  idempotencyKey: `${decidedBy}:${runId}:${kind}:${instanceId}:${Math.random()}`,
  reason: "test",
});

const boundNotices = (deps: TestDeps, kind: string) =>
  deps.db
    .select()
    .from(notifications)
    .where(like(notifications.dedupKey, `bound:%:${kind}`));

describe("actions per run (LLM_ACTIONS_PER_RUN)", () => {
  it("refuses the LLM's action past the run's bound, records why, tells a human once, and leaves the next run its own bound", async () => {
    const { deps, provider } = await fleetFixture({ LLM_ACTIONS_PER_RUN: "3" });
    const kinds = ["reboot", "stop", "start"] as const;
    for (const kind of kinds) expect((await executeAction(deps, act(1, "sim-1", kind))).status).toBe("succeeded");
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await executeAction(deps, act(1, `sim-${(i % 3) + 1}`, "reboot")));
    expect(results.every((r) => r.status === "refused")).toBe(true);
    expect(results[0]!.error).toMatch(/this run already made 3 provider actions \(LLM_ACTIONS_PER_RUN\)/);
    expect(provider.calls).toHaveLength(3);

    const audit = await listActions(deps, "default");
    expect(audit.filter((a) => a.status === "refused")).toHaveLength(10);
    expect(audit.find((a) => a.status === "refused")).toMatchObject({
      error: expect.stringMatching(/LLM_ACTIONS_PER_RUN/),
      result: { providerCalled: false },
    });

    // Ten refusals, one notice: the once-mark bound:1:actions.
    const told = await boundNotices(deps, "actions");
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ runId: 1, title: "Run 1 hit its actions bound" });
    expect(await deps.db.select().from(onceNotices).where(eq(onceNotices.key, "bound:1:actions"))).toEqual([
      expect.objectContaining({ notificationId: told[0]!.id }),
    ]);

    expect((await executeAction(deps, act(2, "sim-2", "reboot"))).status).toBe("succeeded");
    expect(provider.calls).toHaveLength(4);
  });

  it("does not count refused, rate-limited or human actions, nor bound the rules policy per run", async () => {
    const { deps, provider } = await fleetFixture({ LLM_ACTIONS_PER_RUN: "1", ACTION_RATE_LIMIT_PER_HOUR: "1" });
    expect((await executeAction(deps, act(1, "sim-1", "reboot", "rules"))).status).toBe("succeeded");
    expect((await executeAction(deps, act(1, "sim-2", "reboot", "rules"))).status).toBe("succeeded");
    expect((await executeAction(deps, act(1, "sim-1", "reboot"))).status).toBe("rate_limited");
    expect((await executeAction(deps, act(1, "sim-3", "reboot"))).status).toBe("succeeded");
    expect((await executeAction(deps, act(1, "sim-4", "stop"))).status).toBe("refused");
    expect((await executeAction(deps, act(1, "sim-3", "stop", "human"))).status).toBe("succeeded");
    expect(provider.calls).toEqual(["reboot sim-1", "reboot sim-2", "reboot sim-3", "stop sim-3"]);
  });
});

describe("actions per hour (ACTIONS_PER_HOUR)", () => {
  it("counts the LLM and the rules policy together across runs, exempts a human, and frees after the hour", async () => {
    const { deps, provider } = await fleetFixture({ ACTIONS_PER_HOUR: "4" });
    expect((await executeAction(deps, act(1, "sim-1", "reboot", "rules"))).status).toBe("succeeded");
    expect((await executeAction(deps, act(2, "sim-2", "reboot"))).status).toBe("succeeded");
    expect((await executeAction(deps, act(3, "sim-3", "reboot", "rules"))).status).toBe("succeeded");
    expect((await executeAction(deps, act(4, "sim-1", "stop"))).status).toBe("succeeded");
    const refused = await executeAction(deps, act(5, "sim-2", "stop", "rules"));
    expect(refused).toMatchObject({
      status: "refused",
      error: expect.stringMatching(/4 provider actions in the last hour \(ACTIONS_PER_HOUR/),
    });
    expect((await executeAction(deps, act(5, "sim-3", "stop"))).status).toBe("refused");
    expect((await executeAction(deps, act(null, "sim-2", "stop", "human"))).status).toBe("succeeded");
    expect(await boundNotices(deps, "actions")).toHaveLength(1);
    expect(provider.calls).toHaveLength(5);

    deps.clock.advance(60 * 60_000);
    expect((await executeAction(deps, act(6, "sim-3", "stop"))).status).toBe("succeeded");
  });
});

describe("approval requests per run and hour", () => {
  it("files at most APPROVALS_PER_RUN per run and APPROVALS_PER_HOUR per agent, refusing the rest without paging", async () => {
    const { deps } = await fleetFixture({ APPROVALS_PER_RUN: "2", APPROVALS_PER_HOUR: "3" });
    const destroy = (runId: number, id: string) => executeAction(deps, act(runId, id, "destroy"));
    expect((await destroy(1, "sim-1")).status).toBe("awaiting_approval");
    expect((await destroy(1, "sim-2")).status).toBe("awaiting_approval");
    const past = await destroy(1, "sim-3");
    expect(past).toMatchObject({ status: "refused", error: expect.stringMatching(/APPROVALS_PER_RUN/) });
    expect((await destroy(2, "sim-3")).status).toBe("awaiting_approval");
    const hour = await executeAction(deps, { ...act(3, "sim-1", "destroy"), idempotencyKey: "fresh" });
    // sim-1's destroy is already pending: that answers it; a new subject meets the hour bound.
    expect(hour.status).toBe("awaiting_approval");
    expect(await executeAction(deps, act(3, "sim-4", "destroy"))).toMatchObject({
      status: "refused",
      error: expect.stringMatching(/APPROVALS_PER_HOUR/),
    });

    expect(await deps.db.select().from(approvals)).toHaveLength(3);
    const pages = await deps.db.select().from(notifications).where(like(notifications.title, "Approval needed%"));
    expect(pages).toHaveLength(3);
    expect(await boundNotices(deps, "approvals")).toHaveLength(2);
    expect(await deps.db.select().from(actions).where(eq(actions.status, "refused"))).toHaveLength(2);
  });
});

describe("notifications per run and hour", () => {
  const say = (deps: TestDeps, runId: number | null, title: string) =>
    notifyHuman(deps, { agentId: "default", runId, title, body: "b", severity: "info" });

  it("stores at most NOTIFICATIONS_PER_RUN per run, refuses the rest with a reason, and tells once", async () => {
    const { deps } = await fleetFixture({ NOTIFICATIONS_PER_RUN: "3" });
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await say(deps, 1, `alert ${i}`));
    expect(results.slice(0, 3).every((r) => r.notificationId !== null && !r.refused)).toBe(true);
    expect(results.slice(3).every((r) => r.notificationId === null && /NOTIFICATIONS_PER_RUN/.test(r.refused ?? ""))).toBe(true);
    // A repeat of a stored one folds (sends nothing) and is not refused.
    expect(await say(deps, 1, "alert 0")).toMatchObject({ deduplicated: true });

    const stored = await deps.db.select().from(notifications).where(eq(notifications.runId, 1));
    expect(stored.map((n) => n.title).sort()).toEqual(["Run 1 hit its notifications bound", "alert 0", "alert 1", "alert 2"]);
    // Notices no run makes are exempt.
    for (let i = 0; i < 5; i++) expect((await say(deps, null, `system ${i}`)).refused).toBeUndefined();
  });

  it("bounds the agent's runs together to NOTIFICATIONS_PER_HOUR", async () => {
    const { deps } = await fleetFixture({ NOTIFICATIONS_PER_RUN: "3", NOTIFICATIONS_PER_HOUR: "5" });
    let sent = 0;
    for (let run = 1; run <= 4; run++) for (let i = 0; i < 3; i++) if (!(await say(deps, run, `r${run} ${i}`)).refused) sent++;
    // Five alerts; run 2's and run 3's bound notices are exempt and so are stored too.
    expect(sent).toBe(5);
    const hourly = await deps.db.select().from(notifications).where(like(notifications.title, "r_ _"));
    expect(hourly).toHaveLength(5);
    expect((await boundNotices(deps, "notifications")).map((n) => n.runId).sort()).toEqual([2, 3, 4]);
    expect((await say(deps, 5, "later")).refused).toMatch(/NOTIFICATIONS_PER_HOUR/);
    deps.clock.advance(60 * 60_000);
    expect((await say(deps, 6, "later")).refused).toBeUndefined();
  });
});

describe("shadow mode (AGENT_MODE=shadow)", () => {
  it("records the LLM's and the rules' actions and approval requests as proposals and never calls the provider", async () => {
    const { deps, provider } = await fleetFixture({ AGENT_MODE: "shadow" });
    expect(await executeAction(deps, act(1, "sim-1", "reboot"))).toMatchObject({ status: "proposed" });
    expect((await executeAction(deps, act(1, "sim-2", "stop", "rules"))).status).toBe("proposed");
    expect((await executeAction(deps, act(1, "sim-3", "destroy"))).status).toBe("proposed");
    expect(provider.calls).toEqual([]);
    expect(await deps.db.select().from(approvals)).toEqual([]);
    expect(await deps.db.select().from(notifications)).toEqual([]);
    const audit = await listActions(deps, "default");
    expect(audit.map((a) => [a.kind, a.instanceId, a.status, a.result])).toEqual([
      ["destroy", "sim-3", "proposed", { providerCalled: false, shadow: true, approvalRequested: false }],
      ["stop", "sim-2", "proposed", { providerCalled: false, shadow: true }],
      ["reboot", "sim-1", "proposed", { providerCalled: false, shadow: true }],
    ]);
    // GET /api/agents/:agent/actions lists them as proposed.
    const listed = await buildApp(() => deps).request("/api/agents/default/actions", { headers: authHeaders() });
    expect(((await listed.json()) as { actions: { status: string; decider: string }[] }).actions.map((a) => [a.status, a.decider])).toEqual(
      [
        ["proposed", "llm"],
        ["proposed", "rules"],
        ["proposed", "llm"],
      ],
    );
    // A person's own decision still acts.
    expect((await executeAction(deps, act(null, "sim-1", "reboot", "human"))).status).toBe("succeeded");
    expect(provider.calls).toEqual(["reboot sim-1"]);
  });

  it("still bounds proposals per run, as acting would have been", async () => {
    const { deps } = await fleetFixture({ AGENT_MODE: "shadow", LLM_ACTIONS_PER_RUN: "2" });
    const statuses = [];
    for (const id of ["sim-1", "sim-2", "sim-3"]) statuses.push((await executeAction(deps, act(1, id, "stop"))).status);
    expect(statuses).toEqual(["proposed", "proposed", "refused"]);
    expect(
      await deps.db
        .select()
        .from(actions)
        .where(and(eq(actions.status, "proposed"))),
    ).toHaveLength(2);
  });
});
