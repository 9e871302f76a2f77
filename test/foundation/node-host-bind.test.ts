/**
 * HOST: the Node host binds the address it prints. By default 127.0.0.1 (reachable on loopback
 * only: 127.0.0.2, another loopback address, is refused); HOST=127.0.0.2 binds and prints that one
 * instead; a bad HOST is a ConfigError naming it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import type { Logger } from "../../runtime/log.ts";

const hosts: NodeHost[] = [];
beforeEach(() => void vi.spyOn(console, "log").mockImplementation(() => {}));
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
  vi.restoreAllMocks();
});

async function start(vars: Record<string, string>) {
  const printed: string[] = [];
  const log: Logger = { info: (m, f) => void (m === "fleetwarden is running" && printed.push(String(f?.url))), error: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "fw-bind-"));
  const host = await startNodeHost({ PORT: "0", DATABASE_URL: `file:${join(dir, "fw.db")}`, ...vars }, { log });
  hosts.push(host);
  return { host, printed };
}

const reaches = (url: string) =>
  fetch(`${url}/healthz`).then(
    (r) => r.ok,
    () => false,
  );

describe("Node host bind address", () => {
  it("binds 127.0.0.1 by default and prints that address", async () => {
    const { host, printed } = await start({});
    expect(printed).toEqual([`http://127.0.0.1:${host.port}`]);
    expect(await reaches(`http://127.0.0.1:${host.port}`)).toBe(true);
    expect(await reaches(`http://127.0.0.2:${host.port}`)).toBe(false);
  });

  it("binds and prints HOST", async () => {
    const { host, printed } = await start({ HOST: "127.0.0.2" });
    expect(printed).toEqual([`http://127.0.0.2:${host.port}`]);
    expect(host.url).toBe(`http://127.0.0.2:${host.port}`);
    expect(await reaches(`http://127.0.0.2:${host.port}`)).toBe(true);
    expect(await reaches(`http://127.0.0.1:${host.port}`)).toBe(false);
  });

  it("refuses a bad HOST naming it", async () => {
    await expect(start({ HOST: "not a host!" })).rejects.toThrow(/HOST/);
  });
});
