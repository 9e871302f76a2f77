import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";

const EXPECTED_TABLES = [
  "accepted_signatures",
  "actions",
  "agents",
  "approvals",
  "breakers",
  "deliveries",
  "events",
  "instance_events",
  "instances",
  "memory",
  "messages",
  "notification_deliveries",
  "notifications",
  "runs",
  "sessions",
  "simulator_instances",
  "wakes",
];

async function tables(db: ReturnType<typeof openDatabase>) {
  const rs = await db.$client.execute(
    "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '__drizzle%' order by name",
  );
  return rs.rows.map((r) => String(r.name));
}

describe("migrations", () => {
  it("build the whole schema on an empty database", async () => {
    const db = openDatabase(createClient({ url: ":memory:" }));
    expect(await tables(db)).toEqual([]);
    await applyMigrations(db);
    expect(await tables(db)).toEqual(expect.arrayContaining(EXPECTED_TABLES));
    const agentColumns = await db.$client.execute("select name from pragma_table_info('agents')");
    expect(agentColumns.rows.map((r) => r.name)).toEqual(
      expect.arrayContaining(["run_counter", "session_epoch", "run_slot", "next_run_at", "lease_run_id", "lease_expires_at"]),
    );
  });

  it("are harmless to re-run and keep the data", async () => {
    const db = openDatabase(createClient({ url: ":memory:" }));
    await applyMigrations(db);
    await db.$client.execute("insert into agents (id, created_at) values ('a', 1)");
    await applyMigrations(db);
    const rs = await db.$client.execute("select count(*) as n from agents");
    expect(Number(rs.rows[0]!.n)).toBe(1);
  });
});
