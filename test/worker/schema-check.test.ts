import { createClient } from "@libsql/client/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { TEST_CURRENT_KEY, TEST_NEXT_KEY } from "../qstash/fake-qstash.ts";
import { startHranaServer, type HranaServer } from "../support/hrana-server.ts";
import { bootWorker } from "./worker-boot.ts";

const ADMIN_TOKEN = "worker-test-admin-token-0123456789";

describe("the Worker in workerd checks the database schema against its bundled migrations", () => {
  let hrana: HranaServer;
  let worker: Awaited<ReturnType<typeof bootWorker>>;

  beforeAll(async () => {
    hrana = await startHranaServer({ authToken: "turso-test-token" });
    worker = await bootWorker({
      DATABASE_URL: hrana.url,
      DATABASE_AUTH_TOKEN: "turso-test-token",
      ADMIN_TOKEN,
      QSTASH_TOKEN: "worker-test-qstash-token",
      QSTASH_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
      QSTASH_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
      PUBLIC_URL: "https://fleetwarden.worker.test",
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await hrana?.close();
  });

  it("answers 503 naming npm run db:migrate while the database is behind, and serves once it is migrated", async () => {
    const behind = await worker.fetch("/api/agents/default", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(behind.status).toBe(503);
    expect((await behind.json()).error).toMatch(/schema is behind.*npm run db:migrate/);
    // Nothing was written to a database it does not understand.
    const client = createClient({ url: hrana.url, authToken: "turso-test-token" });
    const tables = await client.execute("select name from sqlite_master where type = 'table'");
    expect(tables.rows).toHaveLength(0);

    // What `npm run db:migrate` does, through the same Hrana protocol the Worker uses.
    await applyMigrations(openDatabase(client));
    client.close();

    const migrated = await worker.fetch("/api/agents/default", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(migrated.status).toBe(200);
    expect(await migrated.json()).toMatchObject({ runCounter: 0 });

    // Once current, the isolate does not ask again.
    const checks = () =>
      hrana.statements.filter((s) => s.includes("__drizzle_migrations") && !s.startsWith("CREATE") && !s.startsWith("insert")).length;
    const before = checks();
    expect(before).toBeGreaterThan(0);
    expect((await worker.fetch("/api/agents/default", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    expect(checks()).toBe(before);
  });
});
