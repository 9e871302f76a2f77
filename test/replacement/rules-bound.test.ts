/**
 * The rules policy's replacement bounds (agent/rules/rules-replacement.ts, fleet/replacement/replacement-proposal.ts):
 * a run asks for at most MAX_PER_RUN (10) new replacements and the next run asks for the rest;
 * requests a bound refused (APPROVALS_PER_RUN, APPROVALS_PER_HOUR) are filed again by later runs,
 * a bound's worth at a time (after an hour's bound, only once its hour has passed), until every
 * dead instance was asked about once; and instances already being replaced, or
 * whose replacement a human rejected, never hide a later dead one (a limit on candidates did: ten
 * of them took every slot for good).
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { actions, approvals } from "../../schema/index.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { agentFixture, setInstanceState, trigger } from "../agent/harness.ts";
import { AFTER_S, rows } from "./support.ts";

/** `count` simulated instances, all lost with their host REPLACE_AFTER_S ago. */
async function deadFleet(count: number, vars: Record<string, string> = {}) {
  const { deps } = await agentFixture({
    instances: count,
    vars: { REPLACE_AFTER_S: String(AFTER_S), SIMULATOR_FAILURE_RATE: "0", ...vars },
  });
  const sim = deps.provider as SimulatorProvider;
  for (let i = 1; i <= count; i++) {
    await sim.injectFailure(`sim-${i}`, "host_offline");
    await setInstanceState(deps, `sim-${i}`, "offline");
  }
  deps.clock.advance((AFTER_S + 1) * 1000);
  return deps;
}

/** A run of the rules policy, woken by a report. */
const run = (deps: TestDeps, n: number) =>
  trigger(deps, { source: "webhook", payload: { instanceId: `sim-${(n % 3) + 1}`, state: "offline" } });
const askedFor = async (deps: TestDeps) =>
  (await deps.db.select().from(approvals).where(eq(approvals.kind, "replace"))).map((a) => a.instanceId);

describe("rules replacement bounds", () => {
  it("asks for at most 10 replacements a run; the next run asks for the rest, none twice", async () => {
    const deps = await deadFleet(12, { APPROVALS_PER_RUN: "20", APPROVALS_PER_HOUR: "100" });
    await run(deps, 0);
    expect(await askedFor(deps)).toHaveLength(10);
    await run(deps, 1);
    expect(new Set(await askedFor(deps)).size).toBe(12);
    await run(deps, 2);
    expect(await askedFor(deps)).toHaveLength(12);
  });

  it("requests the approval bounds refused are filed by later runs (3 a run, 10 an hour), each dead instance once", async () => {
    const deps = await deadFleet(12);
    const filed = async (n: number) => {
      const before = (await askedFor(deps)).length;
      await run(deps, n);
      return (await askedFor(deps)).length - before;
    };
    const refusals = async () =>
      (
        await deps.db
          .select()
          .from(actions)
          .where(and(eq(actions.kind, "replace"), eq(actions.status, "refused")))
      ).length;
    const perRun: number[] = [];
    for (let n = 0; n < 4; n++) perRun.push(await filed(n));
    // Within the hour its bound refused them, the last two are not asked (nor refused) again.
    const refusedByTheHour = await refusals();
    for (let n = 4; n < 6; n++) perRun.push(await filed(n));
    expect(perRun).toEqual([3, 3, 3, 1, 0, 0]); // APPROVALS_PER_RUN 3, APPROVALS_PER_HOUR 10
    expect(await refusals()).toBe(refusedByTheHour);
    deps.clock.advance(3_600_000);
    expect([await filed(6), await filed(7)]).toEqual([2, 0]);
    const asked = await askedFor(deps);
    expect(new Set(asked).size).toBe(12);
    expect((await rows(deps)).filter((r) => r.status === "awaiting_approval")).toHaveLength(12);
  });

  it('ten rejected replacements never hide a later dead instance, and each "no" sticks', async () => {
    const deps = await deadFleet(11, { APPROVALS_PER_RUN: "20", APPROVALS_PER_HOUR: "100" });
    await run(deps, 0);
    const asked = await rows(deps);
    // By id: sim-1, sim-10, sim-11, sim-2 … sim-8; sim-9 sorts last and waits for the next run.
    expect(asked.map((r) => r.oldInstanceId)).not.toContain("sim-9");
    for (const row of asked) await decideApproval(deps, "default", row.approvalId!, "reject", undefined, "ada");

    await run(deps, 1);
    const pending = await deps.db.select().from(approvals).where(eq(approvals.status, "pending"));
    expect(pending.map((a) => a.instanceId)).toEqual(["sim-9"]);
    expect(await askedFor(deps)).toHaveLength(11); // none of the rejected ones asked again
    expect(await rows(deps)).toHaveLength(11);
  });
});
