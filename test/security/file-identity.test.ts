/**
 * One writer per database file by identity, not by path (issue #25). With a host running on a
 * file, a second `npm start` (a real child process) reaching the same file through a symlinked
 * directory is refused with one line naming the first's pid, and one through a hard link is
 * refused before it opens the file (SQLite would give it its own WAL). A file deleted under the
 * running host makes /healthz answer 503 naming it and a signed webhook is refused (503), not
 * accepted into the unlinked inode.
 */
import { linkSync, mkdirSync, mkdtempSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { runStart } from "./start-process.ts";

const hosts: NodeHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
});

const vars = (databaseUrl: string) => ({
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
  DATABASE_URL: databaseUrl,
  SIMULATOR_INSTANCES: "0",
  PORT: "0",
});

async function firstHost(): Promise<{ dir: string; file: string; host: NodeHost }> {
  const dir = mkdtempSync(join(tmpdir(), "fw-identity-"));
  mkdirSync(join(dir, "real"));
  const file = join(dir, "real", "fw.db");
  const host = await startNodeHost(vars(`file:${file}`), { log: silentLogger, cronIntervalMs: 3_600_000 });
  hosts.push(host);
  return { dir, file, host };
}

describe("one writer per database file by identity", () => {
  it("refuses a second npm start reaching the file through a symlinked directory, naming the holder", { timeout: 120_000 }, async () => {
    const { dir } = await firstHost();
    symlinkSync(join(dir, "real"), join(dir, "link"));
    const second = await runStart(vars(`file:${join(dir, "link", "fw.db")}`));
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(second.stderr.trim()).toMatch(
      new RegExp(`^Another fleetwarden process \\(pid ${process.pid}, since .*\\) is using this database as node:.*:\\d+:\\d+;`),
    );
  });

  it("refuses a second npm start through a hard link before it opens the file", { timeout: 120_000 }, async () => {
    const { dir, file, host } = await firstHost();
    mkdirSync(join(dir, "other"));
    linkSync(file, join(dir, "other", "fw.db"));
    const second = await runStart(vars(`file:${join(dir, "other", "fw.db")}`));
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(second.stderr).toMatch(/DATABASE_URL .*has 2 hard links/);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it("answers /healthz 503 and refuses a webhook once the file is deleted under the running host", { timeout: 60_000 }, async () => {
    const { file, host } = await firstHost();
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    expect(
      (await fetch(`${host.url}/webhooks/default/instances`, signedWebhook("evt-before", { instanceId: "i-1", state: "running" }))).status,
    ).toBe(202);
    unlinkSync(file);
    const health = await fetch(`${host.url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ ok: false, db: "file gone", dbError: expect.stringContaining(`${file} was deleted`) });
    const hook = await fetch(
      `${host.url}/webhooks/default/instances`,
      signedWebhook("evt-after-delete", { instanceId: "i-1", state: "exited" }),
    );
    expect(hook.status).toBe(503);
    expect((await hook.json()) as { error: string }).toMatchObject({ error: expect.stringContaining("deleted") });
  });
});
