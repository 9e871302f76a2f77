/**
 * What the simulated account costs in database round trips: its list answers page by page (one
 * round trip per SIMULATOR_PAGE_SIZE instances, as a real provider's pages), and a random-failure
 * roll claims every window with one statement and writes only the instances that fail.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { SimulatorProvider, simulatorPages } from "../../fleet/providers/simulator.ts";
import { countingClient } from "../support/counting-client.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { agentTick } from "../../pipeline/index.ts";
import { FLEET_CHECKS } from "../../jobs/tick.ts";
import { events } from "../../schema/index.ts";
import { eq } from "drizzle-orm";

async function counted(count: number, pageSize: number, random: () => number = () => 0.5) {
  const { client, counter } = countingClient(createClient({ url: ":memory:" }));
  const db = openDatabase(client);
  await applyMigrations(db);
  const clock = new FakeClock(Date.now());
  const provider = new SimulatorProvider(db, clock, random, pageSize);
  await provider.seed(count);
  counter.reset();
  return { provider, counter, clock };
}

describe("simulator round trips", () => {
  it("lists page by page: every instance once, in id order, one round trip per page", async () => {
    for (const [count, pages] of [
      [0, 1],
      [10, 1],
      [25, 1],
      [26, 2],
      [50, 2],
      [61, 3],
    ] as const) {
      const { provider, counter } = await counted(count, 25);
      const listed = await provider.list();
      expect(listed.map((i) => i.id)).toEqual(Array.from({ length: count }, (_, i) => `sim-${i + 1}`).sort());
      expect(counter.calls).toBe(pages);
      expect(simulatorPages(count, 25)).toBe(pages);
    }
  });

  it("a roll is one batch for 300 instances, and the failures one more, with a statement per failing instance only", async () => {
    let fail = false;
    const { provider, counter, clock } = await counted(300, 100, () => (fail ? 0 : 0.999999));
    expect(await provider.rollFailures(2)).toEqual([]); // first sighting: windows opened
    expect(counter.calls).toBe(1);
    expect(counter.statements).toBe(2);

    clock.advance(30 * 60_000);
    counter.reset();
    expect(await provider.rollFailures(2)).toEqual([]); // nobody failed: nothing but the claim
    expect(counter.calls).toBe(1);

    clock.advance(30 * 60_000);
    fail = true;
    counter.reset();
    const failed = await provider.rollFailures(2);
    expect(failed).toHaveLength(300);
    expect(counter.calls).toBe(2);
    expect(counter.statements).toBe(2 + 300);
    expect((await provider.list()).every((i) => i.state === "exited")).toBe(true); // the first kind, at random() = 0

    clock.advance(30 * 60_000);
    counter.reset();
    expect(await provider.rollFailures(2)).toEqual([]); // failed instances are not rolled again
    expect(counter.statements).toBe(2);
  });
});

describe("the tick's simulator check", () => {
  it("rolls, writes and reports a random failure within the tick's budget: pages + 5", async () => {
    const { client, counter } = countingClient(createClient({ url: ":memory:" }));
    const db = openDatabase(client);
    await applyMigrations(db);
    const base = await createTestDeps({ db, vars: { SIMULATOR_FAILURE_RATE: "2", RECONCILE_INTERVAL_S: "60" } });
    let fail = false;
    const provider = new SimulatorProvider(db, base.clock, () => (fail ? 0 : 0.999999), 25);
    await provider.seed(60);
    const deps = { ...base, provider };
    await agentTick(deps, "default", FLEET_CHECKS); // first sighting: windows opened, fleet recorded
    base.clock.advance(61_000);
    fail = true;
    counter.reset();
    await agentTick(deps, "default", FLEET_CHECKS);
    // Every instance failed (random() = 0): the agent row (its cache expired), one snapshot, 3
    // pages, the failures in the write batch, their reports in one batch; reconciliation then finds
    // what the reports already recorded and writes nothing.
    expect(counter.calls).toBeLessThanOrEqual(simulatorPages(60, 25) + 5);
    const reported = await db.select().from(events).where(eq(events.source, "webhook"));
    expect(reported).toHaveLength(60);
    expect((await provider.list()).every((i) => i.state === "exited")).toBe(true);
  });
});
