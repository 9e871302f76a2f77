/**
 * Bound statements (db/prepared.ts `bind`, db/bound-statement.ts) rely on how drizzle's batch
 * reads an item. A batch of them must give what the equivalent query builders give — the same
 * results, mapped by drizzle (JSON parsed, booleans, numbers, run results, a raw `get`'s one row)
 * and the same rows stored — on both clients the hosts use; and the installed drizzle must be the
 * version that contract was read from, so an upgrade re-reads it instead of trusting it.
 */
import { describe, expect, it } from "vitest";
import { createClient, type Client } from "@libsql/client";
import { readFileSync } from "node:fs";
import { eq, sql } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { createNodeClient } from "../../db/node-client.ts";
import { bind, prepareRaw } from "../../db/prepared.ts";
import { DRIZZLE_BATCH_CONTRACT } from "../../db/bound-statement.ts";
import { events, instances } from "../../schema/index.ts";

const p = (name: string) => sql.placeholder(name);
const values = {
  agentId: "a1",
  dedupKey: "k1",
  payload: { text: "hi", n: [1, 2] },
  now: 1_000,
  instanceId: "i-1",
  price: 0.25,
  webhook: true,
};

/** The batch written with prepared statements bound to `values`. */
function boundBatch(db: Db) {
  const insertEvent = db
    .insert(events)
    .values({ agentId: p("agentId"), source: "webhook", priority: 1, dedupKey: p("dedupKey"), payload: p("payload"), createdAt: p("now") })
    .onConflictDoNothing()
    .prepare();
  const stored = db
    .select({ id: events.id, payload: events.payload, inserted: sql<number>`changes()` })
    .from(events)
    .where(eq(events.dedupKey, p("dedupKey")))
    .prepare();
  const upsert = prepareRaw(
    db,
    db.run(sql`insert into ${instances} (agent_id, id, state, state_at, price_per_hour, last_seen_at, reports_by_webhook, updated_at)
      values (${p("agentId")}, ${p("instanceId")}, 'running', ${p("now")}, ${p("price")}, ${p("now")}, ${p("webhook")}, ${p("now")})`),
  );
  const instance = db
    .select({ id: instances.id, price: instances.pricePerHour, byWebhook: instances.reportsByWebhook })
    .from(instances)
    .where(eq(instances.id, p("instanceId")))
    .prepare();
  const consume = db
    .update(events)
    .set({ status: "consumed", runId: 7 })
    .where(eq(events.dedupKey, p("dedupKey")))
    .returning({ id: events.id, status: events.status })
    .prepare();
  const count = prepareRaw(db, db.all<{ n: number }>(sql`select count(*) as n from ${events} where agent_id = ${p("agentId")}`));
  const first = prepareRaw(db, db.get<{ state: string }>(sql`select state from ${instances} where id = ${p("instanceId")}`));
  return db.batch([
    bind(insertEvent, values),
    bind(stored, values),
    bind(upsert, values),
    bind(instance, values),
    bind(consume, values),
    bind(count, values),
    bind(first, values),
  ]);
}

/** The same batch written with query builders and the values inline. */
function builderBatch(db: Db) {
  return db.batch([
    db
      .insert(events)
      .values({
        agentId: values.agentId,
        source: "webhook",
        priority: 1,
        dedupKey: values.dedupKey,
        payload: values.payload,
        createdAt: values.now,
      })
      .onConflictDoNothing(),
    db
      .select({ id: events.id, payload: events.payload, inserted: sql<number>`changes()` })
      .from(events)
      .where(eq(events.dedupKey, values.dedupKey)),
    db.run(sql`insert into ${instances} (agent_id, id, state, state_at, price_per_hour, last_seen_at, reports_by_webhook, updated_at)
      values (${values.agentId}, ${values.instanceId}, 'running', ${values.now}, ${values.price}, ${values.now}, ${values.webhook}, ${values.now})`),
    db
      .select({ id: instances.id, price: instances.pricePerHour, byWebhook: instances.reportsByWebhook })
      .from(instances)
      .where(eq(instances.id, values.instanceId)),
    db
      .update(events)
      .set({ status: "consumed", runId: 7 })
      .where(eq(events.dedupKey, values.dedupKey))
      .returning({ id: events.id, status: events.status }),
    db.all<{ n: number }>(sql`select count(*) as n from ${events} where agent_id = ${values.agentId}`),
    db.get<{ state: string }>(sql`select state from ${instances} where id = ${values.instanceId}`),
  ]);
}

const clients: Record<string, () => Promise<Client> | Client> = {
  "the embedded client (Node host)": () => createNodeClient(":memory:"),
  "@libsql/client": () => createClient({ url: ":memory:" }),
};

async function migrated(open: () => Promise<Client> | Client): Promise<Db> {
  const db = openDatabase(await open());
  await applyMigrations(db);
  return db;
}

const stored = async (db: Db) => [await db.select().from(events), await db.select().from(instances)];
/** A run result's fields (the result set's class differs between clients). */
const plain = (results: readonly unknown[]) =>
  results.map((r) => (r && typeof r === "object" && "rowsAffected" in r ? { ...(r as object) } : r));

describe("bound statements in a batch", () => {
  for (const [name, open] of Object.entries(clients)) {
    it(`give the results and rows of the equivalent query builders: ${name}`, async () => {
      const [boundDb, builderDb] = [await migrated(open), await migrated(open)];
      const bound = await boundBatch(boundDb);
      const built = await builderBatch(builderDb);
      expect(plain(bound)).toEqual(plain(built));
      expect(await stored(boundDb)).toEqual(await stored(builderDb));

      // Mapped by drizzle, not raw driver rows: JSON parsed, booleans, numbers, a `get`'s one row.
      const [inserted, read, upserted, instance, consumed, count, first] = bound;
      expect(inserted).toMatchObject({ rowsAffected: 1 });
      expect(read).toEqual([{ id: 1, payload: values.payload, inserted: 1 }]);
      expect(upserted).toMatchObject({ rowsAffected: 1 });
      expect(instance).toEqual([{ id: "i-1", price: 0.25, byWebhook: true }]);
      expect(consumed).toEqual([{ id: 1, status: "consumed" }]);
      expect(count).toEqual([{ n: 1 }]);
      expect(first).toEqual({ state: "running" });
      boundDb.$client.close();
      builderDb.$client.close();
    });
  }

  it("a raw statement prepared once runs alone with the values given", async () => {
    const db = await migrated(clients["the embedded client (Node host)"]!);
    await builderBatch(db);
    const count = prepareRaw(db, db.all<{ n: number }>(sql`select count(*) as n from ${events} where agent_id = ${p("agentId")}`));
    expect(await count.all({ agentId: "a1" })).toEqual([{ n: 1 }]);
    expect(await count.all({ agentId: "nobody" })).toEqual([{ n: 0 }]);
    db.$client.close();
  });

  it(`the installed drizzle-orm is ${DRIZZLE_BATCH_CONTRACT}.x, whose batch the adapter was written against`, () => {
    const { version } = JSON.parse(readFileSync(new URL("../../node_modules/drizzle-orm/package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    // On an upgrade: re-read LibSQLSession.batch (drizzle-orm/libsql/session.js), then move the constant.
    expect(version.startsWith(`${DRIZZLE_BATCH_CONTRACT}.`), `drizzle-orm ${version}: check db/bound-statement.ts's contract`).toBe(true);
  });
});
