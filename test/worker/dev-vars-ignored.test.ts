/**
 * The Worker tests do not depend on a `.dev.vars` in the repository root (issue #38 item 4): the
 * README's "try the Worker locally" steps (docs/operations.md) leave one there, naming a real
 * database, QStash and perhaps an LLM, and wrangler reads it by default. Here one is written (only
 * when none exists; a developer's own is left as it is and must be ignored just the same), a
 * Worker is booted as every Worker test boots it, and it must not see what the file sets.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bootWorker, ROOT, startUnreachableDatabase } from "./worker-boot.ts";
import { TEST_CURRENT_KEY, TEST_NEXT_KEY } from "../qstash/fake-qstash.ts";

const DEV_VARS = join(ROOT, ".dev.vars");

describe("a .dev.vars in the repository root", () => {
  const written = !existsSync(DEV_VARS);
  afterAll(() => {
    if (written) rmSync(DEV_VARS, { force: true });
  });

  it("is not read by a booted test Worker", async () => {
    if (written) writeFileSync(DEV_VARS, "OPENAI_API_KEY=sk-from-dev-vars\nAGENT_MODEL=model-from-dev-vars\n");
    const db = await startUnreachableDatabase();
    const worker = await bootWorker({
      DATABASE_URL: db.url,
      ADMIN_TOKEN: "dev-vars-test-admin-token-0123456789",
      QSTASH_TOKEN: "dev-vars-test-qstash-token",
      QSTASH_CURRENT_SIGNING_KEY: TEST_CURRENT_KEY,
      QSTASH_NEXT_SIGNING_KEY: TEST_NEXT_KEY,
      PUBLIC_URL: "https://fleetwarden.worker.test",
    });
    try {
      const health = (await (await worker.fetch("/healthz")).json()) as { llm: string };
      // The database is unreachable (503), but the adapters are reported: no LLM, as the test gave none.
      expect(health.llm).toBe("none");
    } finally {
      await worker.dispose();
      await db.close();
    }
  }, 60_000);
});
