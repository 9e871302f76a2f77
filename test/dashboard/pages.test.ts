/**
 * Each dashboard page renders the real rows its read models return: runs produced by the real
 * pipeline, chat replies, wakes, notifications, instances and approvals.
 */
import { describe, expect, it } from "vitest";
import { executeAction } from "../../fleet/actions/actions.ts";
import { listApprovals } from "../../fleet/actions/approvals.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { messages } from "../../schema/index.ts";
import { createWake } from "../../pipeline/index.ts";
import { minimalRunStep } from "../support/minimal-run-step.ts";
import { advance } from "../support/drive.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";
import type { AgentRunStep } from "../../jobs/deps.ts";

/** The minimal step, plus the measurements an agent would report. */
const measuredStep: AgentRunStep = async (ctx) => ({
  ...(await minimalRunStep(ctx)),
  decider: "rules",
  promptTokens: 1200,
  completionTokens: 80,
  contextTokens: 1234,
  compaction: { before: 31000, after: 1234, stubbedToolOutputs: 3 },
});

async function setup() {
  const deps = await createTestDeps({ runStep: measuredStep });
  return { deps, client: await dashboardClient(deps) };
}

describe("dashboard pages", () => {
  it("chat: a sent message appears, then the reply of the run that consumed it", async () => {
    const { deps, client } = await setup();
    expect((await client.post("/chat", { text: "How is sim-2 doing?", nonce: "chat-nonce-1" })).headers.get("location")).toBe(
      "/chat?done=sent",
    );
    const waiting = await client.page("/chat");
    expect(waiting.html).toContain("How is sim-2 doing?");
    expect(waiting.html).toContain("Waiting for the agent’s next run");
    await advance(deps, deps.config.debounceHumanMs);
    const answered = await client.page("/chat");
    expect(answered.html).toMatch(/data-role="reply"[^>]*>[\s\S]*Message received; no agent is configured to answer\./);
    expect(answered.html).toContain('href="/runs/1"');
  });

  it("chat: an empty message is refused with 400 naming the problem, nothing written", async () => {
    const { deps, client } = await setup();
    const res = await client.post("/chat", { text: "   " });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("text: must not be empty");
    expect((await client.page("/chat")).html).toContain("No messages yet");
    expect((await deps.db.select().from(messages)).length).toBe(0);
  });

  it("overview and runs: state, counters, context gauge with the compaction record, and the timeline", async () => {
    const { deps, client } = await setup();
    await client.post("/trigger", { back: "/", nonce: "trigger-nonce-1" });
    const scheduled = await client.page("/");
    expect(scheduled.html).toMatch(/data-testid="next-run">\d{4}-\d\d-\d\d/);
    expect(scheduled.html).toContain("data-busy");
    await advance(deps, deps.config.debounceHumanMs);
    const overview = await client.page("/");
    expect(overview.html).toContain('data-testid="run-counter">1<');
    expect(overview.html).toContain('data-testid="session-epoch">1<');
    expect(overview.html).toContain("1,234 tokens of a 30,000 tokens budget (4%)");
    expect(overview.html).toContain("What compaction did in run #1");
    expect(overview.html).toContain("stubbed 3 tool outputs; 1,234 tokens (from 31,000)");
    expect(overview.html).not.toContain("&quot;stubbedToolOutputs&quot;");
    const runs = await client.page("/runs");
    expect(runs.html).toContain('data-run-id="1"');
    expect(runs.html).toContain("manual ×1");
    expect(runs.html).toContain("rules policy");
    expect(runs.html).toContain(">succeeded<");
  });

  it("run detail: consumed events and wakes, tool calls with results, reply and compaction", async () => {
    const { deps, client } = await setup();
    await createWake(deps, "default", { dueAt: deps.clock.now() + 1000, reason: "check sim-3 after reboot", createdByRun: null });
    await client.post("/chat", { text: "restart sim-3 please", nonce: "chat-nonce-2" });
    await advance(deps, 5000);
    const now = deps.clock.now();
    await deps.db.insert(messages).values([
      {
        agentId: "default",
        sessionEpoch: 1,
        runId: 1,
        role: "assistant",
        content: "",
        tokens: 20,
        createdAt: now,
        toolCalls: [{ id: "call_1", type: "function", function: { name: "reboot_instance", arguments: '{"instanceId":"sim-3"}' } }],
      },
      {
        agentId: "default",
        sessionEpoch: 1,
        runId: 1,
        role: "tool",
        content: '{"ok":true}',
        toolCallId: "call_1",
        tokens: 5,
        createdAt: now,
      },
    ]);
    const { status, html } = await client.page("/runs/1");
    expect(status).toBe(200);
    expect(html).toContain("restart sim-3 please");
    expect(html).toContain("check sim-3 after reboot");
    expect(html).toContain("Calls reboot_instance");
    expect(html).toContain("Tool result for call_1");
    expect(html).toContain('data-testid="run-reply"');
    expect(html).toContain("stubbed 3 tool outputs; 1,234 tokens (from 31,000)");
    expect(html).toContain("Calls reboot_instance</strong> with instanceId: sim-3");
    expect(html).toContain("Message from admin: “restart sim-3 please”");
    expect((await client.page("/runs/99")).status).toBe(404);
  });

  it("wakes: pending and consumed wakes with their runs", async () => {
    const { deps, client } = await setup();
    await createWake(deps, "default", { dueAt: deps.clock.now() + 3_600_000, reason: "look at the loss curve", createdByRun: null });
    const { html } = await client.page("/wakes");
    expect(html).toContain("look at the loss curve");
    expect(html).toContain(">pending<");
    expect(html).toContain("in 1 h");
  });

  it("notifications: title, body, severity as text", async () => {
    const { deps, client } = await setup();
    await notifyHuman(deps, {
      agentId: "default",
      runId: null,
      title: "sim-4 exited twice",
      body: "Restarted once; it exited again.",
      severity: "critical",
    });
    for (const path of ["/notifications", "/"]) {
      const { html } = await client.page(path);
      expect(html).toContain("sim-4 exited twice");
      expect(html).toContain(">critical<");
    }
  });

  it("fleet: instance state, GPU, price, last seen, recent events, and the simulated banner", async () => {
    const { deps, client } = await setup();
    await recordInstanceState(deps, {
      agentId: "default",
      instanceId: "sim-9",
      state: "exited",
      source: "webhook",
      dedupKey: "wh-1",
      message: "CUDA OOM",
      details: { gpuName: "A100 SXM4", gpuCount: 2, pricePerHour: 2.1, label: "trainer-9" },
    });
    const { html } = await client.page("/fleet");
    expect(html).toContain("Simulated fleet.");
    expect(html).toMatch(/data-instance-id="sim-9"[\s\S]*<td>trainer-9<\/td>/);
    expect(html).toContain(">exited<");
    expect(html).toContain("2× A100 SXM4");
    expect(html).toContain("$2.10/h");
    expect(html).toContain("CUDA OOM");
  });

  it("approvals: a pending destroy is approved from the page, exactly once", async () => {
    const { deps, client } = await setup();
    await new SimulatorProvider(deps.db, deps.clock).seed(2);
    const requested = await executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: "sim-2",
      kind: "destroy",
      decidedBy: "llm",
      idempotencyKey: "destroy-sim-2",
      reason: "idle for 3 days",
    });
    expect(requested.status).toBe("awaiting_approval");
    const before = await client.page("/approvals");
    expect(before.html).toContain("idle for 3 days");
    expect(before.html).toContain("Approve destroy");
    const res = await client.post(`/approvals/${requested.approvalId}`, { decision: "approve", note: "ok, it is idle" });
    expect(res.headers.get("location")).toBe("/approvals?done=approved");
    const [approval] = await listApprovals(deps, "default");
    expect(approval!.status).toBe("approved");
    expect(approval!.note).toBe("ok, it is idle");
    expect((await client.post(`/approvals/${requested.approvalId}`, { decision: "reject" })).status).toBe(409);
    expect((await client.post(`/approvals/${requested.approvalId}`, { decision: "maybe" })).status).toBe(400);
  });

  it("live: re-renders the requested regions and says whether the agent is busy", async () => {
    const { deps, client } = await setup();
    await client.post("/trigger", { nonce: "trigger-nonce-2" });
    const busy = await (await client.get("/live?parts=state,runs,bogus")).json();
    expect(busy.active).toBe(true);
    expect(Object.keys(busy.html).sort()).toEqual(["runs", "state"]);
    expect(busy.html.runs).toContain("No runs yet");
    await advance(deps, deps.config.debounceHumanMs);
    const idle = await (await client.get("/live?parts=state,runs,chat")).json();
    expect(idle.active).toBe(false);
    expect(idle.runCounter).toBe(1);
    expect(idle.html.runs).toContain('data-run-id="1"');
    expect(idle.html.state).toContain(">idle<");
  });
});
