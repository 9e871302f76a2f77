/**
 * `npm start`'s process killed in the middle of a run (SIGKILL, no shutdown) and started again:
 * no event is lost and no run is left `running`. The run hangs on a scripted LLM that does not
 * answer, so the kill lands while the run holds its lease.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";
import { freePort, waitFor } from "../support/child-process-waits.ts";

const children: ChildProcess[] = [];
const llms: ScriptedLlm[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await Promise.all(llms.splice(0).map((l) => l.close()));
});

describe("npm start killed mid-run", () => {
  it("loses no event and leaves no run running after a restart", async () => {
    const llm = await new ScriptedLlm().start();
    llms.push(llm);
    llm.push({ delayMs: 120_000, then: { text: "too late" } });
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: `file:${join(mkdtempSync(join(tmpdir(), "fw-crash-")), "fw.db")}`,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "test",
      LLM_MAX_RETRIES: "0",
      DEBOUNCE_HUMAN_MS: "100",
      SIMULATOR_INSTANCES: "0",
    };
    const start = () => {
      const child = spawn(process.execPath, ["--import", "tsx", "functions/node.ts"], { env, stdio: "ignore" });
      children.push(child);
      return child;
    };
    const base = `http://127.0.0.1:${port}`;
    const headers = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" };
    const api = async (path: string, init?: RequestInit) => (await fetch(`${base}${path}`, { headers, ...init })).json();

    const first = start();
    await waitFor("the first process", async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined));
    await api("/api/agents/default/messages", { method: "POST", body: JSON.stringify({ text: "restart sim-1" }) });
    await waitFor("the run to hang on the LLM", async () =>
      (await api("/api/agents/default")).running && llm.requests.length > 0 ? true : undefined,
    );
    await api("/api/agents/default/messages", { method: "POST", body: JSON.stringify({ text: "and tell me when done" }) });
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));

    llm.push({ text: "Restarted sim-1; I will tell you." }, { text: "Done." });
    start();
    const runs = await waitFor("the restarted process to finish the work", async () => {
      const state = await api("/api/agents/default");
      if (state.running || state.pendingEvents > 0) return undefined;
      const { runs } = await api("/api/agents/default/runs?limit=10");
      return runs.some((r: { status: string }) => r.status === "succeeded") ? runs : undefined;
    });
    const byId = [...runs].reverse() as { runId: number; status: string; triggers: { id: number }[] }[];
    expect(byId[0]).toMatchObject({ runId: 1, status: "crashed" });
    expect(byId.every((r) => r.status !== "running")).toBe(true);
    const consumed = byId.filter((r) => r.status === "succeeded").flatMap((r) => r.triggers.map((t) => t.id));
    expect(consumed.sort()).toEqual([1, 2]);
  }, 90_000); // two host start-ups in child processes: slow on a loaded machine
});
