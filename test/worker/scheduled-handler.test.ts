/**
 * The Worker's scheduled handler never rejects: with its database unreachable the tick cannot
 * even read the agents, and the handler (and the promise it hands to waitUntil) still resolves,
 * with the failure logged instead of thrown uncaught. Runs the host module directly in Node; a file
 * of its own because the host keeps one isolate per module (test/security/worker-cron-config.test.ts
 * has the configuration-error case).
 */
import type { ExecutionContext } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleScheduled } from "../../functions/host/worker-host.ts";
import { TEST_CURRENT_KEY, TEST_NEXT_KEY } from "../qstash/fake-qstash.ts";
import { startUnreachableDatabase, type RecordingDatabase } from "./worker-boot.ts";

let db: RecordingDatabase;
beforeAll(async () => {
  db = await startUnreachableDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe("the Worker's scheduled handler", () => {
  it("resolves, and so does its waitUntil, when the tick fails on an unreachable database", async () => {
    const waited: Promise<unknown>[] = [];
    const ctx = {
      waitUntil: (p: Promise<unknown>) => void waited.push(p),
      passThroughOnException() {},
      props: {},
    } as unknown as ExecutionContext;
    const env = {
      DATABASE_URL: db.url,
      ADMIN_TOKEN: "worker-test-admin-token-0123456789",
      QSTASH_TOKEN: "worker-test-qstash-token",
      QSTASH_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
      QSTASH_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
      PUBLIC_URL: "https://fleetwarden.worker.test",
    };
    await expect(handleScheduled(env, ctx)).resolves.toBeUndefined();
    expect(waited).toHaveLength(1);
    await expect(Promise.allSettled(waited)).resolves.toEqual([{ status: "fulfilled", value: undefined }]);
    // It did try: the tick's first read reached the (unreachable) database.
    expect(db.bodies.some((body) => /scheduler_health/.test(body))).toBe(true);
  });
});
