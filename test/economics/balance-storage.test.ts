/**
 * Where the provider's balance is kept (issue #33 item 7): the agent's `provider_balances` row
 * (schema/economics.ts), not once_notices. A reading writes usd, when it was read and the attempt;
 * a failed read writes only the attempt and its error and keeps the last good reading, which the
 * read model (and so GET /spend and the spend panel) still shows; the read bound is the row's
 * attempt time; readings left in once_notices by the earlier storage are removed by the next one.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { instances, onceNotices, providerBalances } from "../../schema/index.ts";
import { runTickCheck } from "../../pipeline/index.ts";
import { BALANCE_READ_EVERY_MS, checkBalance, type BalanceReport } from "../../fleet/economics/balance-check.ts";
import { VastProvider } from "../../fleet/providers/vast.ts";
import { loadBalance } from "../../jobs/read-models/balance.ts";
import { startVastServer, type VastServer } from "../fleet/vast-server.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";

let servers: VastServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

const tick = (deps: TestDeps) => runTickCheck<BalanceReport, TestDeps>(deps, "default", checkBalance);
const row = async (deps: TestDeps) => (await deps.db.select().from(providerBalances).where(eq(providerBalances.agentId, "default")))[0];

describe("provider balance storage", () => {
  it("keeps readings in provider_balances, a failure's attempt beside the last good reading", async () => {
    let failing = false;
    const server = await startVastServer({
      apiKey: "vast-key",
      credit: 240,
      intercept: (req) => (failing && req.path === "/api/v0/users/current/" ? { status: 500, body: { error: "boom" } } : undefined),
    });
    servers.push(server);
    const deps = await createTestDeps({ provider: new VastProvider({ apiKey: "vast-key", baseUrl: server.url, sleep: async () => {} }) });
    const now = deps.clock.now();
    await deps.db
      .insert(instances)
      .values({ agentId: "default", id: "1", state: "running", stateAt: now, lastSeenAt: now, updatedAt: now, pricePerHour: 2 });
    // A reading the earlier storage left in once_notices: removed by the next reading.
    await deps.db.insert(onceNotices).values([
      { agentId: "default", key: "balance-read:vast:12", notificationId: null, at: now - 1 },
      { agentId: "default", key: "balance-tried:vast", notificationId: null, at: now - BALANCE_READ_EVERY_MS },
    ]);

    expect(await tick(deps)).toMatchObject({ status: "read", usd: 240 });
    expect(await row(deps)).toEqual({ agentId: "default", usd: 240, at: now, attemptAt: now, error: null });
    expect((await deps.db.select().from(onceNotices)).map((n) => n.key).filter((k) => !k.startsWith("balance-low"))).toEqual([]);
    expect(await loadBalance(deps, "default")).toEqual({ usd: 240, hoursLeft: 120, at: new Date(now).toISOString() });

    // The bound: the row's attempt time; nothing is asked again within 10 minutes.
    deps.clock.advance(BALANCE_READ_EVERY_MS - 1);
    expect(await tick(deps)).toEqual({ status: "read recently" });

    failing = true;
    deps.clock.advance(1);
    expect((await tick(deps)).status).toBe("read failed");
    const failed = await row(deps);
    expect(failed).toMatchObject({ usd: 240, at: now, attemptAt: now + BALANCE_READ_EVERY_MS });
    expect(failed!.error).toMatch(/500/);
    expect(await loadBalance(deps, "default")).toMatchObject({ usd: 240, at: new Date(now).toISOString() });
    expect(await tick(deps)).toEqual({ status: "read recently" });
  });
});
