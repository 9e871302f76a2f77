/**
 * One writer per database file. A first `npm start` holds a run in flight (its LLM call hangs);
 * a second `npm start` on the same file refuses to start with one line naming the first's pid,
 * and the first process's run is untouched (still running, same lease, nothing crashed) while it
 * keeps answering. In-process: a host recovers on start only the leases its own identity took;
 * a live lease another host holds (Turso, a rolling restart) is left to expire.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, describe, expect, it } from "vitest";
import { nodeHostId } from "../../functions/host/host-lock.ts";
import { startNodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { runStart } from "./start-process.ts";
import { freePort, waitFor } from "../support/child-process-waits.ts";

const children: ChildProcess[] = [];
const llms: ScriptedLlm[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await Promise.all(llms.splice(0).map((l) => l.close()));
});

describe("one writer per database file", () => {
  it("a second npm start on the same file refuses in one line while the first's run is in flight, which stays untouched", {
    timeout: 240_000,
  }, async () => {
    const llm = await new ScriptedLlm().start();
    llms.push(llm);
    llm.push({ delayMs: 600_000, then: { text: "too late" } });
    const databaseUrl = `file:${join(mkdtempSync(join(tmpdir(), "fw-one-writer-")), "fw.db")}`;
    const vars = {
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      DATABASE_URL: databaseUrl,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "test",
      LLM_MAX_RETRIES: "0",
      DEBOUNCE_HUMAN_MS: "100",
      SIMULATOR_INSTANCES: "0",
    };
    const port = await freePort();
    const first = spawn(process.execPath, ["--import", "tsx", "functions/node.ts"], {
      env: { PATH: process.env.PATH ?? "", HOME: "/tmp", ...vars, PORT: String(port) } as unknown as NodeJS.ProcessEnv,
      stdio: "ignore",
    });
    children.push(first);
    const base = `http://127.0.0.1:${port}`;
    const headers = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" };
    const api = async (path: string, init?: RequestInit) => (await fetch(`${base}${path}`, { headers, ...init })).json();
    await waitFor("the first process", async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined));
    await api("/api/agents/default/messages", { method: "POST", body: JSON.stringify({ text: "check the fleet" }) });
    await waitFor("the run to be in flight", async () =>
      (await api("/api/agents/default")).running && llm.requests.length > 0 ? true : undefined,
    );
    const during = await api("/api/agents/default/runs");

    const second = await runStart({ ...vars, PORT: "0" });
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(second.stderr).not.toContain("    at ");
    expect(second.stderr.trim()).toMatch(
      new RegExp(`^Another fleetwarden process \\(pid ${first.pid}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\) is using this database`),
    );

    const after = await api("/api/agents/default/runs");
    expect(after).toEqual(during);
    expect(after.runs).toMatchObject([{ runId: 1, status: "running" }]);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${base}/api/agents/default`, { headers }).then((r) => r.status)),
    );
    expect(answers.every((s) => s === 200)).toBe(true);
    expect(llm.requests).toHaveLength(1);
  });

  it("on start recovers only the leases its own identity took; another host's live lease is left alone", { timeout: 120_000 }, async () => {
    const file = join(mkdtempSync(join(tmpdir(), "fw-leases-")), "fw.db");
    const env = {
      DATABASE_URL: `file:${file}`,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      PORT: "0",
      SIMULATOR_INSTANCES: "0",
    };
    const setup = await startNodeHost(env, { log: silentLogger, cronIntervalMs: 3_600_000 });
    await setup.stop();

    const db = createClient({ url: `file:${file}` });
    const future = Date.now() + 3_600_000;
    const { dev, ino } = statSync(file);
    const own = nodeHostId({ dev, ino }, dirname(file));
    const seed = async (leaseHost: string) => {
      await db.execute({
        sql: "update agents set run_counter = run_counter + 1, lease_run_id = run_counter + 1, lease_token = 't', lease_expires_at = ?, lease_host = ? where id = 'default'",
        args: [future, leaseHost],
      });
      await db.execute(
        "insert into runs (agent_id, run_id, status, session_epoch, started_at) select id, run_counter, 'running', 1, 0 from agents where id = 'default'",
      );
      return Number((await db.execute("select run_counter from agents")).rows[0]!.run_counter);
    };
    const runStatus = async (runId: number) =>
      (await db.execute({ sql: "select status from runs where run_id = ?", args: [runId] })).rows[0]!.status;

    const theirs = await seed("node:another-machine:/srv/fleetwarden/data");
    const second = await startNodeHost(env, { log: silentLogger, cronIntervalMs: 3_600_000 });
    await second.stop();
    expect(await runStatus(theirs)).toBe("running");
    expect((await db.execute("select lease_token from agents")).rows[0]!.lease_token).toBe("t");

    await db.execute("update agents set lease_run_id = null, lease_token = null, lease_expires_at = null, lease_host = null");
    await db.execute("update runs set status = 'crashed'");
    const mine = await seed(own);
    const third = await startNodeHost(env, { log: silentLogger, cronIntervalMs: 3_600_000 });
    await third.stop();
    expect(await runStatus(mine)).toBe("crashed");
    expect((await db.execute("select lease_token from agents")).rows[0]!.lease_token).not.toBe("t");
    db.close();
  });
});
