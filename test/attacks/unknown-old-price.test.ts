/**
 * Attack: the old instance's price is unknown (gone, never priced), and the replacement's offer
 * search had no price cap, so a model (or a bad day) rented at $9.997/h.
 * Guard: fleet/replacement/replacement.ts `offerQuery`/`chooseAndCreate`: an unknown old price is
 * capped by the agent's REPLACE_MAX_PRICE_PER_HOUR (offers above it dropped even if the provider's
 * search ignores it), and unset (0) a human decides: the replacement fails to a human, nothing rented.
 */
import { afterEach, describe, expect, it } from "vitest";
import { instances } from "../../schema/index.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { proposeReplacement } from "../../fleet/replacement/replacement-proposal.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { startVastServer, vastOffer, type VastServer } from "../fleet/vast-server.ts";
import { AFTER_S, decide, rows, tick } from "../replacement/support.ts";

const servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** An approved replacement of gone instance 1, price never known; a $9.997/h offer and a $0.90/h one. */
async function approvedUnpriced(vars: Record<string, string> = {}) {
  const apiKey = "vast-test-key-price";
  const server = await startVastServer({ apiKey, offers: [vastOffer(2, { dph_total: 0.9 }), vastOffer(3, { dph_total: 9.997 })] });
  servers.push(server);
  const provider = new VastProvider({ apiKey, baseUrl: server.url, sleep: async () => {} });
  const deps = await createTestDeps({ provider, vars: { REPLACE_AFTER_S: String(AFTER_S), VAST_API_KEY: apiKey, ...vars } });
  const now = deps.clock.now();
  await deps.db.insert(instances).values({
    agentId: "default",
    id: "1",
    state: "running",
    stateAt: now,
    lastSeenAt: now,
    goneAt: now,
    gpuName: "RTX 4090",
    gpuCount: 2,
    pricePerHour: null,
    spec: { image: "pytorch/pytorch:2.3", env: {}, label: null, diskGb: 100 },
    updatedAt: now,
  });
  deps.clock.advance(AFTER_S * 1000 + 1);
  await proposeReplacement(deps, { agentId: "default", runId: null, decidedBy: "rules" }, "1");
  await decide(deps, "approve");
  return { deps, server };
}

describe("replacement of an instance whose price is unknown", () => {
  it("rents nothing without REPLACE_MAX_PRICE_PER_HOUR: a human decides", async () => {
    const { deps, server } = await approvedUnpriced();
    expect((await tick(deps)).steps[0]!.outcome).toBe("failed");
    expect(server.created).toEqual([]);
    expect((await rows(deps))[0]!.error).toMatch(/price of 1 is unknown/);
  });

  it("rents within REPLACE_MAX_PRICE_PER_HOUR, never the $9.997/h offer", async () => {
    const { deps, server } = await approvedUnpriced({ REPLACE_MAX_PRICE_PER_HOUR: "1" });
    expect((await tick(deps)).steps[0]!.outcome).toBe("created");
    expect(server.created).toHaveLength(1);
    expect((await rows(deps))[0]!.offer).toMatchObject({ id: "2", pricePerHour: 0.9 });
  });
});
