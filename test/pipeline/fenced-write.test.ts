/**
 * fencedWrite's contract (pipeline/run-fence.ts), the one way a run's effect reaches the
 * database: its statement gets the fence's condition; a write that changed nothing because the
 * fence no longer holds throws FenceLostError; any other reason for changing nothing is the
 * caller's to tell, and so is a reason the write itself found (a record that answers a repeat).
 */
import { describe, expect, it } from "vitest";
import { and, eq, type SQL } from "drizzle-orm";
import { wakes } from "../../schema/index.ts";
import { createWake, FenceLostError, fencedWrite } from "../../pipeline/index.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { holdLease } from "../support/held-lease.ts";

/** Cancels wake `id` under `holds`, as a run's write would. */
const cancel = (deps: TestDeps, id: number) => (holds: SQL) =>
  deps.db
    .update(wakes)
    .set({ status: "cancelled" })
    .where(and(eq(wakes.id, id), eq(wakes.status, "pending"), holds))
    .returning({ id: wakes.id });

async function withWake() {
  const deps = await createTestDeps();
  const wake = await createWake(deps, "default", { dueAt: deps.clock.now() + 60_000, reason: "later", createdByRun: null });
  return { deps, wake };
}

describe("fencedWrite", () => {
  it("writes while the run holds a live lease", async () => {
    const { deps, wake } = await withWake();
    const fence = await holdLease(deps, "default", 1);
    expect(await fencedWrite(deps, fence, "cancelling", cancel(deps, wake.id))).toEqual([{ id: wake.id }]);
  });

  it("past the lease, writes nothing and throws FenceLostError naming the write", async () => {
    const { deps, wake } = await withWake();
    const fence = await holdLease(deps, "default", 1);
    deps.clock.advance(deps.config.runLeaseMs);
    await expect(fencedWrite(deps, fence, "cancelling the wake", cancel(deps, wake.id))).rejects.toThrow(
      new FenceLostError(1, "cancelling the wake"),
    );
    const [row] = await deps.db.select().from(wakes).where(eq(wakes.id, wake.id));
    expect(row!.status).toBe("pending");
  });

  it("a write that changed nothing for its own reason returns, for the caller to tell", async () => {
    const { deps, wake } = await withWake();
    const fence = await holdLease(deps, "default", 1);
    await fencedWrite(deps, fence, "cancelling", cancel(deps, wake.id));
    expect(await fencedWrite(deps, fence, "cancelling again", cancel(deps, wake.id))).toEqual([]);
  });

  it("a reason the write found itself wins over a lost fence", async () => {
    const { deps, wake } = await withWake();
    const fence = await holdLease(deps, "default", 1);
    deps.clock.advance(deps.config.runLeaseMs);
    const answer = await fencedWrite(
      deps,
      fence,
      "cancelling",
      async (holds) => ((await cancel(deps, wake.id)(holds)).length > 0 ? "cancelled" : "already recorded"),
      (result) => result !== undefined,
    );
    expect(answer).toBe("already recorded");
  });

  it("without a fence (no run writes it), the write is not fenced", async () => {
    const { deps, wake } = await withWake();
    deps.clock.advance(deps.config.runLeaseMs);
    expect(await fencedWrite(deps, null, "cancelling", cancel(deps, wake.id))).toEqual([{ id: wake.id }]);
  });
});
