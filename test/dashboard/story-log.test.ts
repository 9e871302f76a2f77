/**
 * The terminal tells the story: one structured JSON line on stdout per run finished, action
 * taken, approval requested or decided, and notification sent, with no notification channel
 * configured. Driven through the real pipeline and rules policy; lines captured from the logger.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { consoleLogger, type Logger } from "../../runtime/log.ts";
import { notifications } from "../../schema/index.ts";
import { agentFixture, setInstanceState, trigger } from "../agent/harness.ts";

function capture(): Logger & { lines: { message: string; fields: Record<string, unknown> }[] } {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  return { lines, info: (message, fields = {}) => lines.push({ message, fields }), error: () => {} };
}

afterEach(() => vi.restoreAllMocks());

describe("structured story lines", () => {
  it("logs the run finished and the action taken when the rules policy restarts an instance", async () => {
    const { deps } = await agentFixture();
    const log = capture();
    deps.log = log;
    await setInstanceState(deps, "sim-1", "exited");
    const run = await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });
    expect(log.lines.find((l) => l.message === "action taken")?.fields).toMatchObject({
      agentId: "default",
      runId: run.runId,
      instanceId: "sim-1",
      kind: "start",
      decidedBy: "rules",
    });
    expect(log.lines.find((l) => l.message === "run finished")?.fields).toMatchObject({
      agentId: "default",
      runId: run.runId,
      status: "succeeded",
      noop: false,
      decider: "rules",
    });
  });

  it("logs the approval requested, the notification sent (no channel configured) and the decision; the notice links to the approval page", async () => {
    const { deps } = await agentFixture({ vars: { APPROVAL_REQUIRED_ACTIONS: "start", PUBLIC_URL: "https://fleet.example/" } });
    const log = capture();
    deps.log = log;
    await setInstanceState(deps, "sim-1", "exited");
    await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });
    const requested = log.lines.find((l) => l.message === "approval requested")?.fields;
    expect(requested).toMatchObject({ agentId: "default", kind: "start", instanceId: "sim-1", requestedBy: "rules" });
    expect(log.lines.find((l) => l.message === "notification sent")?.fields).toMatchObject({
      channels: [],
      severity: "warning",
      title: "Approval needed: start sim-1",
    });
    const [notice] = await deps.db.select().from(notifications);
    expect(notice!.body).toContain(`Decide at https://fleet.example/approvals?agent=default#approval-${requested!.approvalId}`);
    expect(notice!.body).not.toContain("POST /api");

    await decideApproval(deps, "default", Number(requested!.approvalId), "approve");
    expect(log.lines.find((l) => l.message === "approval decided")?.fields).toMatchObject({
      approvalId: requested!.approvalId,
      decision: "approve",
    });
    expect(log.lines.filter((l) => l.message === "action taken").at(-1)?.fields).toMatchObject({ kind: "start", decidedBy: "human" });
  });

  it("the console logger writes each line as one JSON object on stdout", () => {
    const out = vi.spyOn(console, "log").mockImplementation(() => {});
    consoleLogger.info("run finished", { agentId: "default", runId: 7 });
    expect(out).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(out.mock.calls[0]![0]))).toEqual({ level: "info", message: "run finished", agentId: "default", runId: 7 });
  });
});
