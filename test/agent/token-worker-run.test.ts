/**
 * A run on a host with the token-count worker thread: the fleet snapshot, tool outputs and the
 * history are tokenized on the thread, the request still fits the context budget, and the LLM
 * receives exactly what a host that counts in place sends.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TokenWorker } from "../../functions/host/token-worker.ts";
import type { TokenCounter } from "../../jobs/deps.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { agentFixture, scriptedLlm, seedHistory, trigger } from "./harness.ts";

const workers: TokenWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

/** The thread, with every text it was asked to tokenize written down. */
function recordingThread(): TokenCounter & { texts: string[] } {
  const worker = new TokenWorker(silentLogger);
  workers.push(worker);
  const texts: string[] = [];
  return { texts, tokenize: (batch) => (texts.push(...batch), worker.tokenize(batch)) };
}

/** 300 instances (a snapshot over its share), history near the budget, a big tool output. */
async function busyRun(counter: TokenCounter | undefined) {
  const llm = await scriptedLlm();
  const { deps } = await agentFixture({ llm, instances: 300 });
  if (counter) deps.tokenCounter = counter;
  await seedHistory(deps, 24_000, { withToolPairs: true });
  llm.onSummary = () => ({ text: "Earlier: sim-1 was restarted twice; throughput is nominal." });
  llm.push({ tools: [{ name: "list_instances", arguments: {}, id: "call_list" }] }, { text: "All 300 instances looked at." });
  const run = await trigger(deps, { source: "webhook", payload: { instanceId: "sim-7", state: "exited" } });
  return { run, requests: llm.requests, budget: deps.config.contextBudgetTokens };
}

describe("a run with the token-count worker thread", () => {
  it("fits the budget and sends what counting in place sends", async () => {
    const inPlace = await busyRun(undefined);
    const thread = recordingThread();
    const offThread = await busyRun(thread);

    expect(offThread.run).toMatchObject({ status: "succeeded", decider: "llm" });
    expect(offThread.run.contextTokens).toBeGreaterThan(0);
    expect(offThread.run.contextTokens).toBeLessThanOrEqual(offThread.budget);
    // It had to be compacted: over budget before fitting, within it after.
    const calls = (offThread.run.compaction as { calls: { before: number; after: number }[] }).calls;
    expect(calls.some((c) => c.before > offThread.budget)).toBe(true);
    expect(calls.every((c) => c.after <= offThread.budget)).toBe(true);
    // The big texts went to the thread: the snapshot (cut to its share) and list_instances' output.
    expect(thread.texts.some((t) => t.startsWith("Fleet snapshot at") && t.includes("sim-300"))).toBe(true);
    expect(thread.texts.some((t) => t.includes('"id":"sim-300"'))).toBe(true);
    expect(offThread.requests.find((r) => r.messages.some((m) => m.content?.includes("tool output truncated")))).toBeDefined();
    // Same requests, same measured size as the host that counts in place.
    expect(offThread.requests.map((r) => r.messages)).toEqual(inPlace.requests.map((r) => r.messages));
    expect(offThread.run.contextTokens).toBe(inPlace.run.contextTokens);
    expect(offThread.run.compaction).toEqual(inPlace.run.compaction);
  });
});
