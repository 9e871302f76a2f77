/**
 * The agent on the real Node host (what `npm start` runs) with OPENAI_BASE_URL pointed at an
 * OpenAI-compatible server: a chat message becomes a run decided by the LLM through a tool call,
 * and its final text is the reply in the conversation. (With no LLM configured, the same path is
 * covered by test/agent/rules-fallback.test.ts and the browser test.)
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { ScriptedLlm } from "../support/scripted-llm.ts";
import { waitFor } from "../support/child-process-waits.ts";
import { TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

let host: NodeHost | null = null;
let llm: ScriptedLlm | null = null;
afterEach(async () => {
  await host?.stop();
  await llm?.close();
  host = llm = null;
});

describe("npm start with an OpenAI-compatible endpoint", () => {
  it("answers a chat message through the LLM's tool loop", async () => {
    llm = await new ScriptedLlm().start();
    llm.push({ tools: [{ name: "list_instances", arguments: {} }] }, { text: "All 2 instances are running." });
    host = await startNodeHost(
      {
        PORT: "0",
        DATABASE_URL: `file:${join(mkdtempSync(join(tmpdir(), "fw-llm-host-")), "fw.db")}`,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "test-key",
        AGENT_MODEL: "scripted-model",
        DEBOUNCE_HUMAN_MS: "50",
        SIMULATOR_INSTANCES: "2",
        SIMULATOR_FAILURE_RATE: "0",
      },
      { log: silentLogger },
    );
    const headers = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "Content-Type": "application/json" };
    const get = async (path: string) => (await fetch(`${host!.url}${path}`, { headers })).json();
    expect(await get("/healthz")).toMatchObject({ llm: "scripted-model", provider: "simulator" });

    await fetch(`${host.url}/api/agents/default/messages`, {
      method: "POST",
      headers,
      body: JSON.stringify({ text: "How is the fleet?" }),
    });
    const reply = await waitFor(
      "a run with a reply",
      async () => ((await get("/api/agents/default/runs?limit=5")).runs as { reply: string | null }[]).find((r) => r.reply),
      10_000,
    );
    expect(reply).toMatchObject({ decider: "llm", reply: "All 2 instances are running." });
    // the model saw the message and the tool result, with the fleet snapshot from the database
    const second = llm.requests.at(-1)!;
    expect(second.model).toBe("scripted-model");
    expect(second.messages.some((m) => m.role === "tool" && String(m.content).includes("sim-1"))).toBe(true);
    const conversation = await get("/api/agents/default/conversation");
    expect(conversation.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });
});
