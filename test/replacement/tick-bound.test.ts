/**
 * The replacement check's bounds (fleet/replacement/replacement-check.ts): a proposal whose approval request
 * was never filed (a crash between the two writes) is cancelled once a run lease has passed, not
 * before, and a tick looks at no more than MAX_STEPS_PER_TICK open replacements; the rest wait
 * for later ticks, and each is closed once.
 */
import { describe, expect, it } from "vitest";
import { MAX_STEPS_PER_TICK } from "../../fleet/replacement/replacement-check.ts";
import { replacements } from "../../schema/index.ts";
import { agentFixture } from "../agent/harness.ts";
import { rows, tick } from "./support.ts";

describe("replacement check bounds", () => {
  it("cancels abandoned proposals after a lease, at most MAX_STEPS_PER_TICK a tick", async () => {
    const { deps } = await agentFixture({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
    const total = MAX_STEPS_PER_TICK + 3;
    const now = deps.clock.now();
    await deps.db.insert(replacements).values(
      Array.from({ length: total }, (_, i) => ({
        agentId: "default",
        oldInstanceId: `sim-${i + 1}`,
        status: "proposed",
        reason: "offline for 20 min",
        decidedBy: "rules",
        marker: `fw-replace-${i + 1}`,
        createdAt: now,
        updatedAt: now,
      })),
    );

    expect((await tick(deps)).closed).toEqual([]);
    deps.clock.advance(deps.config.runLeaseMs + 1);
    const closed: number[][] = [];
    for (let i = 0; i < 3; i++) closed.push((await tick(deps)).closed);
    expect(closed.map((c) => c.length)).toEqual([MAX_STEPS_PER_TICK, total - MAX_STEPS_PER_TICK, 0]);
    expect(new Set(closed.flat()).size).toBe(total);
    const after = await rows(deps);
    expect(after.every((r) => r.status === "cancelled" && r.error === "interrupted before its approval was asked")).toBe(true);
  });
});
