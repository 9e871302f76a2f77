/**
 * Flat tokens per incident: a long session's incident costs about what a fresh one does. Through
 * the real pipeline (test/support/incident-session.ts): earlier runs' tool outputs and snapshots
 * are sent as they were until history passes its share (so a prompt cache keeps serving them),
 * then as stubs; history past its share is folded into the persisted summary, and a big
 * fleet's quiet instances are one summary line of the snapshot. Token counts are exact, not timed.
 */
import { describe, expect, it } from "vitest";
import { incidentSession } from "../support/incident-session.ts";
import { snapshotText, SNAPSHOT_FULL_MAX } from "../../agent/prompt/prompt-snapshot.ts";
import { agentFixture, say, scriptedLlm } from "./harness.ts";
import { createTestDeps } from "../support/test-deps.ts";
import type { instances } from "../../schema/index.ts";
import { fitPrompt } from "../../agent/prompt/budget.ts";
import { makeTurn } from "../../agent/prompt/turns.ts";
import type { ChatMessage } from "../../agent/llm/chat-model.ts";

const MIN = 60_000;

describe("tokens per incident", () => {
  it("stay within 1.3× the first incident over a session of 12 incidents", async () => {
    const session = await incidentSession(10, 12);
    const first = session.perIncident[0]!;
    for (const [i, tokens] of session.perIncident.entries()) expect(tokens, `incident ${i + 1}`).toBeLessThanOrEqual(first * 1.3);
  });

  it("an earlier run's tool output reaches the next run whole while history is within its share", async () => {
    const llm = await scriptedLlm();
    const { deps } = await agentFixture({ llm });
    llm.push({ tools: [{ name: "get_instance_logs", arguments: { instance_id: "sim-1" } }] }, { text: "read it" }, { text: "fine" });
    await say(deps, "why did sim-1 exit?");
    await say(deps, "and now?");
    const chat = llm.requests.filter((r) => r.tools);
    const later = chat[2]!.messages.find((m) => m.role === "tool")!;
    expect(later.content).toBe(chat[1]!.messages.at(-1)!.content);
    // The next run's request starts with the last request of the run before, verbatim.
    expect(JSON.stringify(chat[2]!.messages).startsWith(JSON.stringify(chat[1]!.messages).slice(0, -1))).toBe(true);
  });

  it("past history's verbatim share an earlier run's tool output and snapshot reach later calls as JSON stubs", async () => {
    const call: ChatMessage = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "get_instance_logs", arguments: "{}" } }],
    };
    const log: ChatMessage = { role: "tool", tool_call_id: "c1", content: JSON.stringify({ log: "oom ".repeat(400) }) };
    const input: ChatMessage = {
      role: "user",
      content: `Fleet snapshot at then:\n<fleet_snapshot>\n${JSON.stringify({ note: "x ".repeat(300) })}\n</fleet_snapshot>\n\nRun 1`,
    };
    const draft = (verbatim: number) => ({
      fixed: [{ role: "system" as const, content: "You supervise a fleet." }],
      summary: "",
      history: [makeTurn([input], 1), makeTurn([call, log], 3)],
      input: { role: "user" as const, content: "Run 2" },
      current: [],
      historyMax: 2_000,
      historyVerbatimMax: verbatim,
    });
    const sent = async (verbatim: number) => (await fitPrompt(draft(verbatim), [], 100_000, null)).messages;
    // Within the verbatim share: as stored.
    expect((await sent(5_000)).map((m) => m.content)).toEqual(expect.arrayContaining([log.content, input.content]));
    // Past it: both stubbed, each a JSON value that says what it was.
    const stubbed = await sent(1_000);
    const tool = stubbed.find((m) => m.role === "tool")!;
    expect(JSON.parse(String(tool.content))).toMatchObject({ omitted: expect.stringContaining("call the tool again") });
    const earlier = String(stubbed.find((m) => m.role === "user")!.content);
    expect(earlier).toContain('{"omitted":"an earlier run\'s snapshot; the newest one is current"');
    expect(earlier).toMatch(/\n\nRun 1$/);
  });
});

describe("the snapshot of a big fleet", () => {
  it("shows what needs a look in full and the quiet rest as one line by state and GPU", async () => {
    const deps = await createTestDeps({});
    const now = deps.clock.now();
    const row = (id: string, over: Partial<typeof instances.$inferInsert> = {}) =>
      ({
        agentId: "default",
        id,
        state: "running",
        stateAt: now - 120 * MIN,
        label: null,
        gpuName: "RTX 4090",
        gpuCount: 1,
        pricePerHour: 0.4,
        statusMessage: null,
        startedAt: null,
        lastSeenAt: now,
        heartbeatS: null,
        reportsByWebhook: false,
        heartbeatFlaggedAt: null,
        expectedState: null,
        expectedUntil: null,
        goneAt: null,
        gpuUtil: 90,
        gpuUtilAt: now - MIN,
        diskUsedPct: null,
        telemetrySource: "simulator",
        idleSince: null,
        storagePerHour: 0.01,
        spendAccruedAt: null,
        endsAt: null,
        interruptible: null,
        stopReason: null,
        machineId: null,
        replaces: null,
        replacedBy: null,
        webhookOnly: false,
        updatedAt: now,
        ...over,
      }) as typeof instances.$inferSelect;
    const quiet = Array.from({ length: SNAPSHOT_FULL_MAX }, (_, i) => row(`q-${i}`));
    const rows = [
      ...quiet,
      row("parked", { state: "stopped" }),
      row("down", { state: "exited" }),
      row("fresh", { stateAt: now - 5 * MIN }),
      row("named"),
      row("idle", { gpuUtil: 1, idleSince: now - 60 * MIN }),
    ];
    const text = snapshotText({ rows, spendTodayUsd: 0, now, focus: new Set(["named"]) }, deps.config);
    const lines = text
      .split("\n<fleet_snapshot>\n")[1]!
      .split("\n</fleet_snapshot>")[0]!
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(
      lines
        .filter((l) => l.id)
        .map((l) => l.id)
        .sort(),
    ).toEqual(["down", "fresh", "idle", "named"]);
    expect(lines.at(-1)).toMatchObject({
      quiet: SNAPSHOT_FULL_MAX + 1,
      byState: { running: SNAPSHOT_FULL_MAX, stopped: 1 },
      byGpu: { "1x RTX 4090": { count: SNAPSHOT_FULL_MAX + 1 } },
    });
    expect(lines.at(-1).byGpu["1x RTX 4090"].usdPerHour).toBeCloseTo(SNAPSHOT_FULL_MAX * 0.4 + 0.01, 5);
    expect(text).toContain(`(${rows.length} instances;`);

    // A fleet of SNAPSHOT_FULL_MAX or fewer is shown whole.
    const small = snapshotText({ rows: quiet, spendTodayUsd: 0, now }, deps.config);
    expect(small.split("\n").filter((l) => l.startsWith('{"id"'))).toHaveLength(SNAPSHOT_FULL_MAX);
  });
});
