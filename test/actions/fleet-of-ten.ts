/**
 * The fleet breaker tests' fleet: ten simulated instances, `dead` of them offline, as the
 * provider's listing last said (lastReconciledAt), and a rules restart through the action table.
 */
import { eq } from "drizzle-orm";
import { agents, instances } from "../../schema/index.ts";
import { executeAction } from "../../fleet/actions/actions.ts";
import { createTestDb, createTestDeps } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { CountingProvider } from "./counting-provider.ts";

const ids = Array.from({ length: 10 }, (_, i) => `sim-${i + 1}`);

/** Ten running instances; `dead` of them go offline now, seen once. */
export async function fleetOfTen(dead: number) {
  const db = await createTestDb();
  const clock = new FakeClock();
  const provider = new CountingProvider(db, clock);
  await provider.inner.seed(10);
  const deps = await createTestDeps({ db, clock, provider, vars: { APPROVAL_REQUIRED_ACTIONS: "none" } });
  const now = clock.now();
  await db.insert(instances).values(
    ids.map((id, i) => ({
      agentId: "default",
      id,
      state: i < dead ? "offline" : "running",
      stateAt: now,
      lastSeenAt: now,
      updatedAt: now,
    })),
  );
  await db.update(agents).set({ lastReconciledAt: now }).where(eq(agents.id, "default"));
  return { deps, provider };
}

export type Fleet = Awaited<ReturnType<typeof fleetOfTen>>;

/** The provider's listing says the same again, `s` seconds later. */
export async function seenAgain({ deps }: Fleet, s: number) {
  deps.clock.advance(s * 1000);
  await deps.db.update(agents).set({ lastReconciledAt: deps.clock.now() }).where(eq(agents.id, "default"));
}

let n = 0;
/** A rules reboot of `instanceId`, each with a key of its own. */
export const restart = ({ deps }: Fleet, instanceId: string) =>
  executeAction(deps, {
    agentId: "default",
    runId: null,
    instanceId,
    kind: "reboot",
    decidedBy: "rules",
    idempotencyKey: `restart-${n++}`,
  });
