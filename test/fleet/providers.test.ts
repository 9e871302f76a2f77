/**
 * Which provider a deployment and an agent get (fleet/providers/providers.ts): the host's default from
 * PROVIDER or whichever key is set, through the host's own wiring; an agent's setting naming the
 * host's account reusing it; and an agent's provider that has no key anywhere failing every call
 * with an error naming why, never listing an empty fleet and never falling back to the host's.
 */
import { describe, expect, it } from "vitest";
import { wireDeps } from "../../functions/host/wire-deps.ts";
import { LambdaProvider } from "../../fleet/providers/lambda.ts";
import { ProviderError } from "../../fleet/providers/provider.ts";
import { agentProvider } from "../../fleet/providers/providers.ts";
import { RunpodProvider } from "../../fleet/providers/runpod.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { createTestDeps, testConfig } from "../support/test-deps.ts";

async function hostWith(vars: Record<string, string>) {
  const base = await createTestDeps();
  return wireDeps({ db: base.db, clock: base.clock, scheduler: base.scheduler, log: silentLogger, config: testConfig(vars) });
}

describe("provider choice", () => {
  it("the host takes the provider whose key is set, or the one PROVIDER names", async () => {
    expect((await hostWith({ RUNPOD_API_KEY: "rp" })).provider).toBeInstanceOf(RunpodProvider);
    expect((await hostWith({ PROVIDER: "lambda", LAMBDA_API_KEY: "l", RUNPOD_API_KEY: "rp" })).provider).toBeInstanceOf(LambdaProvider);
    expect((await hostWith({ PROVIDER: "runpod" })).provider).toBeInstanceOf(SimulatorProvider);
  });

  it("an agent naming the host's own account shares the host's provider", async () => {
    const deps = await createTestDeps();
    expect(agentProvider(deps.provider, { kind: "simulator" }, deps.db, deps.clock, deps.config)).toBe(deps.provider);
  });

  it("an agent's provider without a key fails every call naming why, instead of using the host's account", async () => {
    const deps = await createTestDeps();
    const own = agentProvider(deps.provider, { kind: "lambda" }, deps.db, deps.clock, deps.config);
    expect(own).not.toBe(deps.provider);
    const err = await own.list().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toContain("LAMBDA_API_KEY");
    await expect(own.stop("x")).rejects.toBeInstanceOf(ProviderError);
  });
});
