/**
 * An 8 MiB reply of one character (gpt-tokenizer is quadratic on such input: it froze the Node host
 * for minutes, issue #25) reaches a real `npm start` (a child process) from the scripted LLM over
 * real HTTP while a loop asks /healthz: every health check answers (no gap over 3 s, or five
 * times the slowest check before the reply on a loaded machine), the run finishes, and it records outputCut with a reply saying it was cut.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, describe, expect, it } from "vitest";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import { TEST_ADMIN_TOKEN, TEST_WEBHOOK_SECRET } from "../support/test-deps.ts";
import { freePort, waitFor } from "../support/child-process-waits.ts";

const children: ChildProcess[] = [];
const llms: ScriptedLlm[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await Promise.all(llms.splice(0).map((l) => l.close()));
});

describe("an 8 MiB model reply on the Node host", () => {
  it("is cut before counting: /healthz answers throughout and the run records outputCut", { timeout: 180_000 }, async () => {
    const llm = await new ScriptedLlm().start();
    llms.push(llm);
    llm.push({ text: "a".repeat(8 * 1024 * 1024) });
    const file = join(mkdtempSync(join(tmpdir(), "fw-huge-reply-")), "fw.db");
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: "/tmp",
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      DATABASE_URL: `file:${file}`,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "test",
      LLM_MAX_RETRIES: "0",
      LLM_TIMEOUT_MS: "60000",
      DEBOUNCE_HUMAN_MS: "0",
      SIMULATOR_INSTANCES: "0",
      PORT: String(port),
    };
    const host = spawn(process.execPath, ["--import", "tsx", "functions/node.ts"], {
      env: env as unknown as NodeJS.ProcessEnv,
      stdio: "ignore",
    });
    children.push(host);
    const base = `http://127.0.0.1:${port}`;
    await waitFor("the host", async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined));

    // The baseline: the slowest of 20 health checks before the reply arrives.
    let baseline = 0;
    for (let i = 0; i < 20; i++) {
      const at = Date.now();
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      baseline = Math.max(baseline, Date.now() - at + 50);
      await new Promise((r) => setTimeout(r, 50));
    }
    const answeredAt: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const res = await fetch(`${base}/healthz`);
        await res.arrayBuffer();
        answeredAt.push(Date.now());
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const headers = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" };
    const startedAt = Date.now();
    await fetch(`${base}/api/agents/default/messages`, { method: "POST", headers, body: JSON.stringify({ text: "status?" }) });
    const db = createClient({ url: `file:${file}` });
    const run = await waitFor(
      "the run to finish",
      async () => {
        const row = (await db.execute("select status, output_cut, reply from runs where agent_id = 'default' order by run_id desc limit 1"))
          .rows[0];
        return row && row.status !== "running" ? row : undefined;
      },
      150_000,
    );
    polling = false;
    await poll;
    db.close();

    expect(llm.requests).toHaveLength(1);
    expect(run.status).toBe("succeeded");
    expect(Number(run.output_cut)).toBe(1);
    expect(String(run.reply)).toContain("reply cut: it was over 32768 characters");
    expect(String(run.reply).length).toBeLessThan(33_000);
    const gaps = [startedAt, ...answeredAt].slice(1).map((t, i) => t - [startedAt, ...answeredAt][i]!);
    expect(answeredAt.length).toBeGreaterThan(3);
    // Relative to how this machine answered before the reply (it is shared): 3 s, or five times the
    // slowest check before. Counting the reply on the event loop held it for minutes.
    expect(Math.max(...gaps)).toBeLessThan(Math.max(3000, 5 * baseline));
  });
});
