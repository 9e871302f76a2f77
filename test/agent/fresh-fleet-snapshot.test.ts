/**
 * The snapshot of a fleet fresh from its first reconciliation (issue 37 item 7): every instance
 * is new, but one still in the state reconciliation first listed it in is no recent change, so a
 * 100-instance fleet's quiet instances stay one summary line and one incident stays within 15,000
 * prompt tokens (counted with gpt-tokenizer, as the budget counts them: exact, not timed), and
 * every request's share a prompt cache can serve, the run boundary's included, stays at 85 % or more.
 * Through the real pipeline (test/support/fresh-fleet-incident.ts, also bench/agent-cost.bench.ts).
 */
import { describe, expect, it } from "vitest";
import { freshFleetIncident, INCIDENT_INSTANCE } from "../support/fresh-fleet-incident.ts";
import { agentFixture } from "../support/agent-fixture.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { injectSimulatorFailure } from "../../fleet/providers/simulator-reports.ts";
import { readPromptRows } from "../../agent/prompt/prompt-reads.ts";
import { RECENT_CHANGE_MS } from "../../agent/prompt/prompt-snapshot.ts";
import { instances } from "../../schema/index.ts";
import type { ChatRequestBody } from "../support/scripted-llm.ts";

const TOKENS_PER_INCIDENT_MAX = 15_000;
const CACHE_SHARE_MIN = 0.85;

/** The request's newest snapshot: it opens this run's input (an earlier run's input holds that run's). */
function newestSnapshot(request: ChatRequestBody): string {
  return [...request.messages].reverse().find((m) => m.role === "user" && m.content?.includes("<fleet_snapshot>"))!.content!;
}

/** The JSON lines of the request's `<fleet_snapshot>` block. */
function snapshotLines(content: string): Record<string, unknown>[] {
  const block = content.slice(content.indexOf("<fleet_snapshot>") + "<fleet_snapshot>".length, content.indexOf("</fleet_snapshot>"));
  return block
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("a fleet fresh from its first reconciliation", () => {
  it("one exit on 100 instances: the exited one in full, the other 99 one summary line, within 15,000 tokens", async () => {
    const incident = await freshFleetIncident(100);
    for (const request of incident.requests.filter((r) => r.tools)) {
      const lines = snapshotLines(newestSnapshot(request));
      const listed = lines.filter((l) => typeof l.id === "string");
      expect(listed.map((l) => l.id)).toEqual([INCIDENT_INSTANCE]);
      expect(lines.find((l) => "quiet" in l)).toMatchObject({ quiet: 99 });
    }
    expect(incident.total).toBeLessThanOrEqual(TOKENS_PER_INCIDENT_MAX);
    // Each call extends the one before, across the run boundary too (the snapshot follows the
    // stored history, which is sent as it was): the provider's cache serves most of every request.
    expect(incident.cacheShareOverall).toBeGreaterThanOrEqual(0.85);
    expect(incident.cacheShares).toHaveLength(5);
    for (const [i, share] of incident.cacheShares.entries()) expect(share, `request ${i + 1}`).toBeGreaterThanOrEqual(CACHE_SHARE_MIN);
  });

  it("without the first sightings in the history every instance looks changed: all in full (up to the snapshot's cut), far over the budget", async () => {
    const incident = await freshFleetIncident(100, { withoutFirstSightings: true });
    const lines = snapshotLines(newestSnapshot(incident.requests[0]!));
    // 100 in full pass the snapshot's share of the budget: it is cut, and says so.
    expect(lines.filter((l) => typeof l.id === "string").length).toBeGreaterThan(50);
    expect(lines.some((l) => "quiet" in l)).toBe(false);
    expect(incident.total).toBeGreaterThan(TOKENS_PER_INCIDENT_MAX);
  });

  it("only an instance still in its first-listed state counts as unchanged: a real change or a restart ends it", async () => {
    const { deps } = await agentFixture({ instances: 30 });
    await deps.db.delete(instances);
    await reconcileFleet(deps, "default");
    const context = { agentId: "default", sessionEpoch: 1, wakes: [] };
    expect((await readPromptRows(deps, context)).firstSeen.size).toBe(30);

    deps.clock.advance(60_000);
    await injectSimulatorFailure(deps, "sim-3", "oom");
    const after = (await readPromptRows(deps, context)).firstSeen;
    expect(after.has("sim-3")).toBe(false);
    expect(after.size).toBe(29);

    // Past RECENT_CHANGE_MS nothing is a recent change anyway: the set is read only for recent states.
    deps.clock.advance(RECENT_CHANGE_MS);
    expect((await readPromptRows(deps, context)).firstSeen.size).toBe(0);
  });
});
