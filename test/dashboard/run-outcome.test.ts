/**
 * Runs as a table with one-line decisions written by code from what the run left behind, "Note"
 * instead of "Error" for a successful rules fallback, and a run page that narrates compaction
 * and events in words, headed "Decisions" for rules runs. Runs come from the real pipeline with
 * the rules policy (no LLM configured).
 */
import { describe, expect, it } from "vitest";
import { describeCompaction, describeEvent, keyValues } from "../../dashboard/shell/readable.ts";
import { outcomeLine, runNote } from "../../jobs/read-models/run-outcome.ts";
import { agentFixture, say, setInstanceState, trigger } from "../agent/harness.ts";
import { dashboardClient } from "./dashboard-client.ts";

describe("one-line run outcomes", () => {
  it("says what a rules run did: restarted sim-1; re-check in 5 min, with a Note, not an Error", async () => {
    const { deps } = await agentFixture();
    await setInstanceState(deps, "sim-1", "exited");
    const run = await trigger(deps, { source: "webhook", payload: { instanceId: "sim-1", state: "exited" } });
    const client = await dashboardClient(deps);
    const runs = await client.page("/runs");
    const row = runs.html.match(new RegExp(`<tr data-run-id="${run.runId}">[\\s\\S]*?</tr>`))![0];
    // The restart was told to a human (fleet/actions/money-told.ts), and the outcome says so.
    expect(row).toContain(
      '<span data-role="outcome">restarted sim-1; notified a human: “Started sim-1: change per hour unknown (the provider reported no price for that state)”; re-check in 5 min</span>',
    );
    expect(row).toContain("Note: rules policy decided: no LLM is configured");
    expect(row).not.toContain("Error");
    const page = await client.page(`/runs/${run.runId}`);
    expect(page.html).toContain(
      'data-testid="run-outcome">restarted sim-1; notified a human: “Started sim-1: change per hour unknown (the provider reported no price for that state)”; re-check in 5 min<',
    );
    expect(page.html).toContain("<dt>Note</dt><dd>rules policy decided: no LLM is configured</dd>");
    expect(page.html).toContain("<h2>Decisions</h2>");
    expect(page.html).not.toContain("Tool calls and results");
    expect(page.html).toContain("sim-1 → exited");
  });

  it("says a chat run replied, and a run with nothing to do is a no-op", async () => {
    const { deps } = await agentFixture();
    const chat = await say(deps, "how are things?");
    const idle = await trigger(deps, { source: "manual", payload: { reason: "look" } });
    const client = await dashboardClient(deps);
    const { html } = await client.page("/runs");
    expect(html).toMatch(new RegExp(`data-run-id="${chat.runId}"[\\s\\S]*?data-role="outcome">replied to a message<`));
    expect(html).toMatch(new RegExp(`data-run-id="${idle.runId}"[\\s\\S]*?data-role="outcome">no-op<`));
  });

  it("writes failures, crashes, approvals asked and refused actions in words", () => {
    const base = { runId: 1, noop: false, decider: "llm", reply: null, error: null, startedAt: "2026-01-01T00:00:00.000Z", triggers: [] };
    expect(outcomeLine({ ...base, status: "failed", error: "database is locked\nstack" }, undefined)).toBe(
      "failed: database is locked; its events are retried",
    );
    expect(outcomeLine({ ...base, status: "crashed" }, undefined)).toMatch(/^crashed/);
    const effects = {
      actions: [
        { kind: "destroy", instanceId: "sim-2", status: "awaiting_approval" },
        { kind: "reboot", instanceId: "sim-3", status: "rate_limited" },
      ],
      wakes: [{ dueAt: Date.parse("2026-01-01T01:00:00.000Z") }],
      notifications: [{ title: "sim-3 keeps failing" }],
    };
    expect(outcomeLine({ ...base, status: "succeeded" }, effects)).toBe(
      "asked a human to approve destroy sim-2; reboot sim-3 refused by the rate limit; notified a human: “sim-3 keeps failing”; re-check in 60 min",
    );
    expect(runNote({ status: "failed", decider: "rules", error: "rules policy decided: x" })?.term).toBe("Error");
    expect(runNote({ status: "succeeded", decider: "llm", error: "stopped after 8 LLM calls" })?.term).toBe("Error");
  });
});

describe("readable records", () => {
  it("narrates compaction per LLM call", () => {
    const record = {
      budget: 30000,
      calls: [
        {
          budget: 30000,
          before: 41000,
          after: 24982,
          stubbedToolOutputs: 3,
          droppedNoopTurns: 0,
          summarized: { turns: 12, through: 40 },
          trimmedTurns: 0,
          truncatedToolOutputs: false,
          truncatedInput: false,
        },
        {
          budget: 30000,
          before: 25100,
          after: 25100,
          stubbedToolOutputs: 0,
          droppedNoopTurns: 0,
          summarized: null,
          trimmedTurns: 0,
          truncatedToolOutputs: false,
          truncatedInput: false,
        },
      ],
    };
    expect(describeCompaction(record)).toEqual([
      "LLM call 1: stubbed 3 tool outputs, summarised 12 turns; 24,982 of 30,000 tokens (from 41,000).",
      "LLM call 2: fit without compaction: 25,100 of 30,000 tokens.",
    ]);
    expect(describeCompaction(null)).toEqual([]);
  });

  it("writes events and tool arguments as text, not JSON", () => {
    expect(describeEvent("webhook", { instanceId: "sim-1", state: "exited", message: "OOM" })).toBe("sim-1 → exited (OOM)");
    expect(describeEvent("heartbeat", { instanceId: "sim-2", state: "running", heartbeatMissed: true, silentForS: 400 })).toBe(
      "sim-2 missed its heartbeat (silent 400 s, state running)",
    );
    expect(describeEvent("approval", { decision: "reject", kind: "destroy", instanceId: "sim-3", note: "has data" })).toBe(
      "A human rejected destroy sim-3 (note: has data)",
    );
    expect(keyValues('{"instance_id":"sim-1","in_seconds":300}')).toBe("instance_id: sim-1, in_seconds: 300");
    expect(keyValues("not json")).toBe("not json");
  });
});
