/**
 * The reporter on both hosts (test/scenarios/hosts.ts: Node on a libSQL file; the deploy bundle in
 * workerd on Turso's protocol via the Hrana test server): GET /reporter.sh is the script, the
 * reporter route derives the instance's key inside each host's Web Crypto, reporter.sh run under
 * `sh` (a stand-in nvidia-smi on PATH) reports and the report is stored, and instance A's key is
 * refused for instance B; the host's own scheduled tick (the Worker's cron trigger, the Node
 * interval's function) GETs DEADMAN_URL once, at a local receiver.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLoopback } from "../support/loopback-server.ts";
import { REPORTER_SCRIPT } from "../../jobs/reporter/reporter-script.ts";
import type { ScenarioHost } from "../scenarios/driver.ts";
import { startNodeScenarioHost, startWorkerScenarioHost } from "../scenarios/hosts.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

const SCRIPT = resolve(import.meta.dirname, "../../reporter/reporter.sh");

describe.each([
  ["node", startNodeScenarioHost],
  ["worker", startWorkerScenarioHost],
] as const)("the reporter on the %s host", { timeout: 120_000 }, (_name, start) => {
  let host: ScenarioHost;
  let dir: string;
  const pings: string[] = [];
  let receiver: Awaited<ReturnType<typeof listenLoopback>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "fw-reporter-hosts-"));
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin", "nvidia-smi"), '#!/bin/sh\necho "88, 1000, 24576"\n');
    chmodSync(join(dir, "bin", "nvidia-smi"), 0o755);
    receiver = await listenLoopback(
      createServer((req, res) => {
        pings.push(`${req.method} ${req.url}`);
        res.writeHead(200, { "content-type": "text/plain" }).end("OK");
      }),
    );
    host = await start({ vars: { DEADMAN_URL: `${receiver.origin}/ping/check-uuid` } });
  }, 240_000);
  afterAll(async () => {
    await host?.close();
    await receiver?.close();
  });

  const api = async (path: string) =>
    (await (await fetch(`${host.baseUrl}${path}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).json()) as any;

  const run = (env: Record<string, string>) =>
    new Promise<{ code: number; stderr: string }>((done) =>
      execFile(
        "sh",
        [SCRIPT, "--once"],
        {
          env: {
            ...process.env,
            PATH: `${join(dir, "bin")}:${process.env.PATH}`,
            TMPDIR: dir,
            FLEETWARDEN_WORKSPACE: dir,
            FLEETWARDEN_LOCK: join(dir, `lock-${Math.random().toString(36).slice(2)}`),
            ...env,
          },
          timeout: 60_000,
        },
        (err, _stdout, stderr) => done({ code: err ? 1 : 0, stderr }),
      ),
    );

  it("serves GET /reporter.sh", async () => {
    const res = await fetch(`${host.baseUrl}/reporter.sh`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/x-shellscript/);
    expect(await res.text()).toBe(REPORTER_SCRIPT);
  });

  it("a report from reporter.sh with the instance's own key is stored; that key is refused for another instance", async () => {
    const setup = await api("/api/agents/default/instances/C.77/reporter");
    expect(setup.key).toMatch(/^whsec_/);
    const env = { ...setup.env, FLEETWARDEN_URL: host.baseUrl };
    // Sent again until the figures land (at most 5): on Node a report's figures can be dropped
    // (clock.now() read twice in fleet/instances; see reporter.test.ts).
    let stored: any;
    for (let i = 0; i < 5 && !stored?.gpuUtil; i++) {
      const sent = await run(env);
      expect(sent.stderr).toMatch(/reported C\.77 \(20[02]\)/);
      stored = ((await api("/api/agents/default/instances")).instances as any[]).find((x) => x.id === "C.77");
    }
    expect(stored).toMatchObject({ state: "running", gpuUtil: 88, webhookOnly: true });

    const refused = await run({ ...env, FLEETWARDEN_INSTANCE_ID: "C.78" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused \(401\)/);
    expect(((await api("/api/agents/default/instances")).instances as any[]).map((x) => x.id)).not.toContain("C.78");
  });

  it("the scheduled tick pings DEADMAN_URL once", async () => {
    pings.length = 0;
    await host.runScheduled();
    expect(pings).toEqual(["GET /ping/check-uuid"]);
  });
});
