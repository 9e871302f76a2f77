/**
 * Test dependencies wired to QStash: real libSQL, the real QStashScheduler pointed at a local fake
 * QStash, the test signing keys, and a fake clock set to real time (signatures are checked
 * against real time, and the replay guard prunes by the injected clock).
 */
import { FakeClock } from "../support/fake-clock.ts";
import { qstashSchedulerFromConfig } from "../../pipeline/index.ts";
import { createTestDeps, testConfig } from "../support/test-deps.ts";
import { TEST_CURRENT_KEY, TEST_NEXT_KEY, TEST_PUBLIC_URL, TEST_QSTASH_TOKEN, type FakeQStash } from "./fake-qstash.ts";

export function qstashVars(fake: FakeQStash): Record<string, string> {
  return {
    SCHEDULER: "qstash",
    QSTASH_URL: fake.baseUrl,
    QSTASH_TOKEN: TEST_QSTASH_TOKEN,
    QSTASH_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
    QSTASH_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
    PUBLIC_URL: TEST_PUBLIC_URL,
  };
}

export async function createQStashDeps(fake: FakeQStash) {
  const config = testConfig(qstashVars(fake));
  return createTestDeps({ config, scheduler: qstashSchedulerFromConfig(config), clock: new FakeClock(Date.now()) });
}

/** Row counts of every table: "nothing written" means this did not change. */
export async function tableCounts(deps: Awaited<ReturnType<typeof createQStashDeps>>): Promise<Record<string, number>> {
  const tables = await deps.db.$client.execute(
    "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '__drizzle%' order by name",
  );
  const counts: Record<string, number> = {};
  for (const row of tables.rows) {
    const name = String(row.name);
    const result = await deps.db.$client.execute(`select count(*) as n from "${name}"`);
    counts[name] = Number(result.rows[0]!.n);
  }
  return counts;
}
