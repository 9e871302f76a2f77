/**
 * Attack: the database's `-wal` file alone is deleted under a running Node host (a cleanup script,
 * an operator "freeing space"): SQLite keeps appending to the unlinked log, /healthz stays ok, and
 * every write since the last checkpoint is lost at the next start (the database was gone in 2 of 5
 * crash runs). Or a second process on another machine (another host name: two containers sharing
 * a volume) starts on the same file: the one-writer lock was keyed by host name, so both write.
 * Guard: functions/host/database-file-watch.ts watches the `-wal` beside the file (deleted or
 * replaced: /healthz 503, writes refused, as for the file itself); functions/host/host-lock.ts
 * takes an OS-level lock file beside the database (`<file>.fleetwarden-lock`, created exclusively,
 * holding pid and host name, touched every 30 s) before the database is opened: a holder on another
 * host is refused naming it and the lock file, taken over only once the lock is stale (untouched for
 * LOCK_STALE_MS: that process crashed); one on this host is taken over only when its pid is dead.
 */
import { existsSync, mkdtempSync, readFileSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LOCK_STALE_MS } from "../../functions/host/host-lock.ts";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { runStart } from "../security/start-process.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { signedWebhook } from "../support/signed-webhook.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";

const hosts: NodeHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
});

const vars = (file: string) => ({
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
  DATABASE_URL: `file:${file}`,
  SIMULATOR_INSTANCES: "0",
  PORT: "0",
});

async function running() {
  const dir = mkdtempSync(join(tmpdir(), "fw-wal-"));
  const file = join(dir, "fw.db");
  const host = await startNodeHost(vars(file), { log: silentLogger, cronIntervalMs: 3_600_000 });
  hosts.push(host);
  return { dir, file, host };
}

describe("the database's -wal and a second host on one file", () => {
  it("deleting only the -wal makes /healthz 503 and refuses writes", { timeout: 60_000 }, async () => {
    const { file, host } = await running();
    expect(
      (await fetch(`${host.url}/webhooks/default/instances`, signedWebhook("wal-1", { instanceId: "i-1", state: "running" }))).status,
    ).toBe(202);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    expect(existsSync(`${file}-wal`)).toBe(true);
    unlinkSync(`${file}-wal`);
    const health = await fetch(`${host.url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ ok: false, dbError: expect.stringContaining(`${file}-wal`) });
    const hook = await fetch(`${host.url}/webhooks/default/instances`, signedWebhook("wal-2", { instanceId: "i-1", state: "exited" }));
    expect(hook.status).toBe(503);
  });

  it("replacing the -wal with another file is noticed the same way", { timeout: 60_000 }, async () => {
    const { file, host } = await running();
    await fetch(`${host.url}/webhooks/default/instances`, signedWebhook("wal-3", { instanceId: "i-1", state: "running" }));
    const copy = readFileSync(`${file}-wal`);
    unlinkSync(`${file}-wal`);
    writeFileSync(`${file}-wal`, copy);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(503);
  });

  it("a second process under another host name is refused, naming the holder and the lock file", { timeout: 120_000 }, async () => {
    const { dir, file, host } = await running();
    // The child believes it runs on another machine: os.hostname() answers "other-box".
    const preload = join(dir, "other-host.mjs");
    writeFileSync(
      preload,
      'import os from "node:os"; import { syncBuiltinESMExports } from "node:module"; os.hostname = () => "other-box"; syncBuiltinESMExports();\n',
    );
    const second = await runStart({ ...vars(file), NODE_OPTIONS: `--import=file://${preload}` });
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(second.stderr).toMatch(new RegExp(`pid ${process.pid} on host .*${file.replaceAll(".", "\\.")}\\.fleetwarden-lock`));
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it("a lock left by a dead pid on this host is taken over; one held on another host only once stale", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "fw-lock-"));
    const file = join(dir, "fw.db");
    const { hostname } = await import("node:os");
    writeFileSync(`${file}.fleetwarden-lock`, JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), startedAt: 0 }));
    const host = await startNodeHost(vars(file), { log: silentLogger, cronIntervalMs: 3_600_000 });
    hosts.push(host);
    expect(JSON.parse(readFileSync(`${file}.fleetwarden-lock`, "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    await host.stop();
    hosts.pop();
    expect(existsSync(`${file}.fleetwarden-lock`)).toBe(false);

    writeFileSync(`${file}.fleetwarden-lock`, JSON.stringify({ pid: 2 ** 22 + 7, host: "other-box", startedAt: 0 }));
    await expect(startNodeHost(vars(file), { log: silentLogger, cronIntervalMs: 3_600_000 })).rejects.toThrow(/on host other-box/);

    // Untouched for LOCK_STALE_MS, another host's lock is a crashed process's (a container recreated under a new name): taken over.
    const old = new Date(Date.now() - LOCK_STALE_MS - 1_000);
    utimesSync(`${file}.fleetwarden-lock`, old, old);
    const after = await startNodeHost(vars(file), { log: silentLogger, cronIntervalMs: 3_600_000 });
    hosts.push(after);
    expect(JSON.parse(readFileSync(`${file}.fleetwarden-lock`, "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
  });
});
