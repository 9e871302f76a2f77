/** Test deps with a seeded simulated fleet, a counting provider, and fleetwarden's view of it. */
import { createTestDb, createTestDeps, type RecordingScheduler, type TestDeps } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { instances } from "../../schema/index.ts";
import { CountingProvider } from "./counting-provider.ts";
import type { AgentRunStep } from "../../jobs/deps.ts";

export interface FleetFixture {
  deps: TestDeps;
  provider: CountingProvider;
  scheduler: RecordingScheduler;
}

/** sim-1 … sim-3 running on the provider and in fleetwarden's view; inbox and scheduler empty. */
export async function fleetFixture(vars: Record<string, string> = {}, runStep?: AgentRunStep): Promise<FleetFixture> {
  const db = await createTestDb();
  const clock = new FakeClock();
  const provider = new CountingProvider(db, clock);
  await provider.inner.seed(3);
  const deps = await createTestDeps({ db, clock, provider, vars, ...(runStep ? { runStep } : {}) });
  const now = clock.now();
  await db.insert(instances).values(
    ["sim-1", "sim-2", "sim-3"].map((id) => ({
      agentId: "default",
      id,
      state: "running",
      stateAt: now - 60_000,
      lastSeenAt: now,
      updatedAt: now,
    })),
  );
  return { deps, provider, scheduler: deps.scheduler as RecordingScheduler };
}
