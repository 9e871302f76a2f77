/**
 * db/insert-where.ts: one row written by INSERT … SELECT only where its condition holds, with
 * columns named by the table's definition: named values bound with their column's encoding, the
 * rest given their defaults, and a column the table does not have refused by the compiler.
 */
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { insertWhere } from "../../db/insert-where.ts";
import { actions, wakes } from "../../schema/index.ts";
import { createTestDb } from "../support/test-deps.ts";

describe("insertWhere", () => {
  it("writes the row when the condition holds: values encoded by their column, the rest defaulted", async () => {
    const db = await createTestDb();
    const rows = await insertWhere(
      db,
      actions,
      {
        agentId: "default",
        kind: "reboot",
        decidedBy: "llm",
        idempotencyKey: "k",
        status: "pending",
        result: { providerCalled: false },
        createdAt: 5,
      },
      sql`1 = 1`,
    ).returning({ id: actions.id });
    expect(rows).toHaveLength(1);
    const stored = (await db.$client.execute("select result, run_id, approval_id from actions")).rows[0]!;
    expect(stored).toMatchObject({ result: '{"providerCalled":false}', run_id: null, approval_id: null });
    const [wake] = await insertWhere(db, wakes, { agentId: "default", dueAt: 1, reason: "r", createdAt: 1 }, sql`1 = 1`).returning();
    expect(wake).toMatchObject({ status: "pending", attempts: 0, dropReason: null });
  });

  it("writes nothing when the condition does not hold", async () => {
    const db = await createTestDb();
    const rows = await insertWhere(db, wakes, { agentId: "default", dueAt: 1, reason: "r", createdAt: 1 }, sql`1 = 0`).returning({
      id: wakes.id,
    });
    expect(rows).toEqual([]);
    expect(await db.select().from(wakes)).toEqual([]);
  });

  it("upserts like any insert (its WHERE lets SQLite parse the conflict clause)", async () => {
    const db = await createTestDb();
    const claim = () =>
      insertWhere(
        db,
        actions,
        { agentId: "default", kind: "stop", decidedBy: "llm", idempotencyKey: "same", status: "pending", createdAt: 1 },
        sql`1 = 1`,
      )
        .onConflictDoNothing()
        .returning({ id: actions.id });
    expect(await claim()).toHaveLength(1);
    expect(await claim()).toEqual([]);
  });

  it("names columns by the table: one it does not have does not compile, and writes nothing", async () => {
    const db = await createTestDb();
    // @ts-expect-error `agent` is not a column of wakes (its column is agentId)
    const misnamed = insertWhere(db, wakes, { agent: "default", dueAt: 1, reason: "r", createdAt: 1 }, sql`1 = 1`);
    const error = await misnamed.then(
      () => null,
      (err: unknown) => err as { cause?: unknown },
    );
    expect(String(error?.cause)).toMatch(/NOT NULL constraint failed: wakes.agent_id/);
    expect(await db.select().from(wakes)).toEqual([]);
  });
});
