/**
 * Provider details on a recorded state change (fleet/instances/instance-state.ts binds one "given" flag per
 * detail column): a detail the change names is written, one it does not name stays as stored,
 * and a repeated dedup key writes none.
 */
import { describe, expect, it } from "vitest";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("instance details on a state change", () => {
  it("writes the details it names and keeps the others", async () => {
    const deps = await createTestDeps();
    const row = async () => ({
      ...(
        await deps.db.$client.execute(
          "select state, label, gpu_name, gpu_count, price_per_hour, started_at from instances where id = 'i-1'",
        )
      ).rows[0],
    });
    const change = (dedupKey: string, state: "running" | "exited", details?: Record<string, unknown>) =>
      recordInstanceState(deps, {
        agentId: "default",
        instanceId: "i-1",
        state,
        source: "reconcile",
        dedupKey,
        ...(details ? { details } : {}),
      });

    await change("r1", "running", { label: "trainer", gpuName: "A100", gpuCount: 2, pricePerHour: 1.5, startedAt: 1000 });
    expect(await row()).toEqual({
      state: "running",
      label: "trainer",
      gpu_name: "A100",
      gpu_count: 2,
      price_per_hour: 1.5,
      started_at: 1000,
    });

    deps.clock.advance(1000);
    await change("r2", "exited", { label: "renamed", gpuCount: null });
    expect(await row()).toEqual({
      state: "exited",
      label: "renamed",
      gpu_name: "A100",
      gpu_count: null,
      price_per_hour: 1.5,
      started_at: 1000,
    });

    deps.clock.advance(1000);
    await change("r3", "running");
    expect(await row()).toEqual({
      state: "running",
      label: "renamed",
      gpu_name: "A100",
      gpu_count: null,
      price_per_hour: 1.5,
      started_at: 1000,
    });

    deps.clock.advance(1000);
    await change("r1", "exited", { label: "from a repeat" });
    expect((await row()).label).toBe("renamed");
  });
});
