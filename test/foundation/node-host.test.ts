import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";

const hosts: NodeHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
  vi.restoreAllMocks();
});

describe("Node host", () => {
  it("starts with no configuration, migrates, creates the default agent and an admin token printed once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fw-host-"));
    const env = { PORT: "0", DATABASE_URL: `file:${join(dir, "nested", "fleetwarden.db")}` };
    const printed: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)));

    const first = await startNodeHost(env, { log: silentLogger });
    hosts.push(first);
    const token = readFileSync(join(dir, "nested", "admin-token"), "utf8").trim();
    expect(token).toMatch(/^fw_/);
    expect(statSync(join(dir, "nested", "admin-token")).mode & 0o077).toBe(0);
    expect(printed.filter((l) => l.includes(token))).toHaveLength(1);

    const health = await fetch(`${first.url}/healthz`);
    expect(await health.json()).toMatchObject({
      ok: true,
      db: "ok",
      scheduler: { kind: "local", ok: true },
      llm: "none",
      provider: "simulator",
    });
    const agent = await fetch(`${first.url}/api/agents/default`, { headers: { Authorization: `Bearer ${token}` } });
    expect(agent.status).toBe(200);
    await first.stop();

    printed.length = 0;
    const second = await startNodeHost(env, { log: silentLogger });
    hosts.push(second);
    expect(second.config.adminToken).toBe(token);
    expect(printed.join("\n")).not.toContain(token);
  });

  it("stops with a message naming a bad variable", async () => {
    await expect(startNodeHost({ PORT: "x" }, { log: silentLogger })).rejects.toThrow(/PORT/);
  });
});
