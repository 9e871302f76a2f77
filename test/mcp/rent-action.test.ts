/**
 * The rent action's own bound (fleet/actions/rent.ts): one offer search and at most
 * REPLACE_MAX_OFFERS creates per rental while each offer is taken (Vast.ai `no_such_ask`), then
 * `failed` naming the offers; a "maybe rented" answer (a 5xx) is never followed by a second create,
 * and no lease is recorded for a rental that did not happen.
 */
import { describe, expect, it } from "vitest";
import { executeAction } from "../../fleet/actions/actions.ts";
import { ProviderError } from "../../fleet/providers/provider.ts";
import { eq } from "drizzle-orm";
import { actions, leases } from "../../schema/index.ts";
import { CountingProvider } from "../actions/counting-provider.ts";
import { createTestDb, createTestDeps } from "../support/test-deps.ts";
import { FakeClock } from "../support/fake-clock.ts";

const spec = {
  gpuName: "RTX 4090",
  gpuCount: 1,
  maxPricePerHour: 1,
  image: "pytorch/pytorch",
  diskGb: null,
  leaseSeconds: 3600,
  purpose: "train",
  owner: "ada",
  client: "codex",
};

async function setup() {
  const db = await createTestDb();
  const clock = new FakeClock();
  const provider = new CountingProvider(db, clock);
  const deps = await createTestDeps({ db, clock, provider, vars: { REPLACE_MAX_OFFERS: "2" } });
  const rent = (key: string) =>
    executeAction(deps, {
      agentId: "default",
      runId: null,
      instanceId: `rent:${key}`,
      kind: "rent",
      decidedBy: "llm",
      model: "mcp:codex",
      operator: "ada",
      idempotencyKey: key,
      rent: spec,
    });
  return { deps, provider, rent };
}

describe("the rent action", () => {
  it("tries at most REPLACE_MAX_OFFERS taken offers, then fails naming them, with no lease", async () => {
    const { deps, provider, rent } = await setup();
    provider.outage = new ProviderError("no_such_ask: offer taken", 400);
    const result = await rent("rent-taken-1");
    expect(result.status).toBe("failed");
    expect(result.error).toMatch(/every offer tried was taken/);
    expect(provider.calls.filter((c) => c.startsWith("create"))).toHaveLength(2);
    expect(await deps.db.select().from(leases)).toHaveLength(0);
    // A repeat of the key is the recorded answer: no second search, no create.
    const before = provider.calls.length;
    expect((await rent("rent-taken-1")).repeated).toBe(true);
    expect(provider.calls.length).toBe(before);
  });

  it("never creates twice after a maybe-rented answer", async () => {
    const { provider, rent } = await setup();
    provider.outage = new ProviderError("upstream timeout", 504);
    const result = await rent("rent-maybe-1");
    expect(result.status).toBe("failed");
    expect(result.error).toMatch(/may have been rented: look for the label "fw-lease owner=ada until=/);
    expect(provider.calls.filter((c) => c.startsWith("create"))).toHaveLength(1);
  });

  it("a crash between the create and its record does not rent twice when the call is repeated", async () => {
    const { deps, provider, rent } = await setup();
    expect((await rent("rent-crash-1")).status).toBe("succeeded");
    // What a process killed after the provider answered leaves: the claimed action still pending, no lease.
    await deps.db
      .update(actions)
      .set({ status: "pending", finishedAt: null, result: null })
      .where(eq(actions.idempotencyKey, "rent-crash-1"));
    await deps.db.delete(leases);
    const again = await rent("rent-crash-1");
    expect(again.repeated).toBe(true);
    expect(provider.calls.filter((c) => c.startsWith("create"))).toHaveLength(1);
  });
});
