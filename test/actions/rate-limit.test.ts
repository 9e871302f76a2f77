/** The per-instance hourly quota of provider calls (ACTION_RATE_LIMIT_PER_HOUR). */
import { describe, expect, it } from "vitest";
import { executeAction } from "../../fleet/actions/actions.ts";
import type { ActionRequest } from "../../fleet/actions/action-types.ts";
import { ProviderError } from "../../fleet/providers/provider.ts";
import { fleetFixture } from "./fleet-fixture.ts";

const reboot = (key: string, instanceId = "sim-1"): ActionRequest => ({
  agentId: "default",
  runId: 1,
  instanceId,
  kind: "reboot",
  decidedBy: "llm",
  idempotencyKey: key,
});

describe("action rate limit", () => {
  it("refuses the call past the quota, records it, and leaves other instances alone", async () => {
    const { deps, provider } = await fleetFixture({ ACTION_RATE_LIMIT_PER_HOUR: "2" });
    expect((await executeAction(deps, reboot("a"))).status).toBe("succeeded");
    expect((await executeAction(deps, reboot("b"))).status).toBe("succeeded");
    const limited = await executeAction(deps, reboot("c"));
    expect(limited).toMatchObject({ status: "rate_limited", repeated: false, error: expect.stringContaining("at most 2") });
    expect(await executeAction(deps, reboot("c"))).toMatchObject({ status: "rate_limited", repeated: true });
    expect((await executeAction(deps, reboot("d", "sim-2"))).status).toBe("succeeded");
    expect(provider.calls).toEqual(["reboot sim-1", "reboot sim-1", "reboot sim-2"]);
  });

  it("frees the quota an hour after the calls", async () => {
    const { deps, provider } = await fleetFixture({ ACTION_RATE_LIMIT_PER_HOUR: "1" });
    await executeAction(deps, reboot("a"));
    deps.clock.advance(59 * 60_000);
    expect((await executeAction(deps, reboot("b"))).status).toBe("rate_limited");
    deps.clock.advance(60_000);
    expect((await executeAction(deps, reboot("c"))).status).toBe("succeeded");
    expect(provider.calls).toHaveLength(2);
  });

  it("counts failed provider calls, so an outage cannot be hammered", async () => {
    const { deps, provider } = await fleetFixture({ ACTION_RATE_LIMIT_PER_HOUR: "3" });
    provider.outage = new ProviderError("Vast.ai API unavailable (HTTP 503)", 503, true);
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await executeAction(deps, reboot(`try-${i}`))).status);
    expect(statuses).toEqual(["failed", "failed", "failed", ...Array(7).fill("rate_limited")]);
    expect(provider.calls).toHaveLength(3);
  });

  it("uses 6 calls per instance per hour by default", async () => {
    const { deps, provider } = await fleetFixture({ LLM_ACTIONS_PER_RUN: "100" });
    for (let i = 0; i < 8; i++) await executeAction(deps, reboot(`k${i}`));
    expect(provider.calls).toHaveLength(6);
  });

  it("does not hold back a human-approved action", async () => {
    const { deps, provider } = await fleetFixture({ ACTION_RATE_LIMIT_PER_HOUR: "1" });
    await executeAction(deps, reboot("a"));
    const human = await executeAction(deps, { ...reboot("approval:1"), decidedBy: "human" });
    expect(human.status).toBe("succeeded");
    expect(provider.calls).toHaveLength(2);
  });
});
