/** The cron tick prunes old dropped events and finished deliveries, and nothing else. */
import { describe, expect, it } from "vitest";
import { deliveries, events } from "../../schema/index.ts";
import { RETENTION_MS } from "../../triggers/retention.ts";
import { runCronTick } from "../../triggers/tick.ts";
import { createTestDeps } from "../support/test-deps.ts";

describe("retention", () => {
  it("deletes dropped events and finished deliveries older than the retention, keeping everything else", async () => {
    const deps = await createTestDeps();
    const old = deps.clock.now();
    const event = (dedupKey: string, status: string, createdAt: number) => ({
      agentId: "default", source: "webhook", priority: 1, dedupKey, payload: {}, status, createdAt, ...(status === "consumed" ? { runId: 1 } : {}),
    });
    await deps.db.insert(events).values([
      event("old-dropped", "dropped", old),
      event("old-consumed", "consumed", old),
      event("new-dropped", "dropped", old + RETENTION_MS),
    ]);
    const delivery = (dedupKey: string, status: string, createdAt: number) => ({ dedupKey, body: {}, status, dueAt: createdAt, createdAt });
    await deps.db.insert(deliveries).values([delivery("old-delivered", "delivered", old), delivery("old-failed", "failed", old), delivery("old-pending", "pending", old)]);

    deps.clock.advance(RETENTION_MS + 1);
    await runCronTick(deps);
    expect((await deps.db.select({ k: events.dedupKey }).from(events)).map((r) => r.k).sort()).toEqual(["new-dropped", "old-consumed"]);
    expect((await deps.db.select({ k: deliveries.dedupKey }).from(deliveries)).map((r) => r.k)).toEqual(["old-pending"]);
  });
});
