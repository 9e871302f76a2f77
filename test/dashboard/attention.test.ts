/**
 * The overview puts what needs attention first, and the navigation counts it on every page:
 * pending approvals (linked to the approval), instances not running as intended (a failed state,
 * stuck loading, a missed heartbeat, a rejected action) and the LLM's state. Each condition is
 * made by the real code paths, and each clears when its cause does.
 */
import { describe, expect, it } from "vitest";
import { Breaker, llmBreakerName } from "../../agent/llm/breaker.ts";
import { loadAttention, STUCK_STARTING_MS } from "../../jobs/read-models/attention.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { flagSilentInstances } from "../support/one-check.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { agentFixture, scriptedLlm, trigger } from "../agent/harness.ts";
import { dashboardClient } from "./dashboard-client.ts";

let webhookId = 0;
const report = (deps: TestDeps, instanceId: string, state: string, message?: string) =>
  recordInstanceState(deps, {
    agentId: "default",
    instanceId,
    state: state as "running",
    source: "webhook",
    dedupKey: `wh-${++webhookId}`,
    ...(message ? { message } : {}),
  });

const strip = (html: string) => html.match(/<div class="attention[\s\S]*?<\/ul>/)![0];

describe("attention first", () => {
  it("lists a pending approval with links, and counts it in both navigation badges on every page", async () => {
    const deps = await createTestDeps();
    const { approvalId } = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "d-1",
      reason: "idle",
    });
    const client = await dashboardClient(deps);
    const overview = await client.page("/");
    expect(strip(overview.html)).toContain(`<a href="/approvals#approval-${approvalId}">destroy sim-2</a>`);
    expect(strip(overview.html)).toContain("1 approval waiting");
    for (const path of ["/", "/fleet", "/runs", "/wakes", "/notifications", "/approvals", "/chat"]) {
      const { html } = await client.page(path);
      expect(html, path).toMatch(
        /href="\/approvals"[^>]*>Approvals<span data-live="badge-approvals"><span class="nav-count"> 1<span class="visually-hidden"> waiting<\/span>/,
      );
      expect(html, path).toMatch(/>Overview<span data-live="badge-attention"><span class="nav-count"> 1</);
    }
    // The approval's notification links to it.
    const notifications = await client.page("/notifications");
    expect(notifications.html).toContain(`<a href="/approvals#approval-${approvalId}">Decide on approval #${approvalId}</a>`);
    expect((await client.page("/approvals")).html).toContain(`id="approval-${approvalId}"`);

    await decideApproval(deps, "default", approvalId!, "approve");
    const after = await client.page("/");
    expect(strip(after.html)).toContain("No approvals waiting.");
    expect(after.html).toContain('<span data-live="badge-approvals"></span>');
  });

  it("flags instances that failed, are stuck loading, missed a heartbeat or had an action rejected; clears them when they recover", async () => {
    const deps = await createTestDeps();
    await report(deps, "sim-1", "exited", "container exited with code 1");
    await report(deps, "sim-2", "loading");
    await report(deps, "sim-3", "running");
    await report(deps, "sim-4", "running");
    const { approvalId } = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-4",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "d-4",
    });
    await decideApproval(deps, "default", approvalId!, "reject", "it holds data");

    let attention = await loadAttention(deps, "default");
    expect(attention.instances.map((i) => [i.id, i.reasons])).toEqual([
      ["sim-1", ["container exited with code 1"]],
      ["sim-4", ["a human rejected destroy"]],
    ]);
    deps.clock.advance(STUCK_STARTING_MS);
    await report(deps, "sim-4", "running"); // a heartbeat: sim-4 still reports
    expect(await flagSilentInstances(deps, "default")).toContain("sim-3");
    attention = await loadAttention(deps, "default");
    expect(Object.fromEntries(attention.instances.map((i) => [i.id, i.reasons]))).toMatchObject({
      "sim-2": [`stuck loading for ${STUCK_STARTING_MS / 60_000} min`, "heartbeat missed"],
      "sim-3": ["heartbeat missed"],
    });
    const html = strip((await (await dashboardClient(deps)).page("/")).html);
    expect(html).toContain('data-instance-id="sim-1"');
    expect(html).toContain('<a href="/fleet/sim-2">sim-2</a>');

    await report(deps, "sim-1", "running");
    expect((await loadAttention(deps, "default")).instances.map((i) => i.id)).not.toContain("sim-1");
  });

  it("shows the LLM's state: not configured, breaker open, falling back to rules", async () => {
    const none = await createTestDeps();
    expect((await loadAttention(none, "default")).llm).toEqual({ configured: false, breakerOpenUntil: null, fallingBack: false });
    expect(strip((await (await dashboardClient(none)).page("/")).html)).toContain(
      "LLM: not configured; the rules policy decides every run.",
    );

    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ status: 500 }, { status: 503 });
    const run = await trigger(deps, { source: "manual", payload: { reason: "look" } });
    expect(run.decider).toBe("rules");
    expect((await loadAttention(deps, "default")).llm).toMatchObject({ configured: true, fallingBack: true });
    expect(strip((await (await dashboardClient(deps)).page("/")).html)).toContain("falling back to rules");
    const breaker = new Breaker(deps, llmBreakerName("default", deps.llm!.model));
    for (let i = 0; i < 3; i++) await breaker.recordFailure();
    const attention = await loadAttention(deps, "default");
    expect(attention.llm.breakerOpenUntil).toBeGreaterThan(deps.clock.now());
    expect(attention.count).toBe(1);
    expect(strip((await (await dashboardClient(deps)).page("/")).html)).toContain("LLM breaker open");
  });
});
