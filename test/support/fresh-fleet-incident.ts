/**
 * One incident on a fleet fresh from its first reconciliation, for the agent-cost benchmark
 * (bench/agent-cost.bench.ts) and its test (test/agent/fresh-fleet-snapshot.test.ts): a simulated
 * fleet of N instances is listed by the real reconciliation (every instance new), the agent's run
 * on those first sightings answers, then one instance runs out of memory and exits → the agent
 * reads its logs, starts it, schedules a re-check and answers; the re-check run confirms (5 agent
 * calls), all through the real pipeline against a scripted OpenAI-compatible server on loopback.
 * Measured over the incident's calls: prompt tokens as the budget counts them
 * (agent/prompt/tokens.ts countPrompt), and each request's share a provider's prompt cache can
 * serve: the token-level common prefix with the request before it (tools first, then the messages
 * in order, as providers render them), over the request's tokens.
 * `withoutFirstSightings` removes the reconciliation's first-sighting history rows before the
 * incident: the snapshot then judges the fleet as it did before issue 37 (every instance new, so
 * every one shown in full), the baseline the benchmark reports beside the figure.
 */
import { and, eq, isNull } from "drizzle-orm";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { countPrompt } from "../../agent/prompt/tokens.ts";
import type { ChatMessage, ChatTool } from "../../agent/llm/chat-model.ts";
import { injectSimulatorFailure } from "../../fleet/providers/simulator-reports.ts";
import { instanceEvents, instances } from "../../schema/index.ts";
import { agentFixture, runPipeline } from "./agent-fixture.ts";
import { deliverDue } from "./drive.ts";
import { reconcileFleet } from "./one-check.ts";
import { type ChatRequestBody, ScriptedLlm } from "./scripted-llm.ts";

export const INCIDENT_INSTANCE = "sim-7";

export interface FreshFleetIncident {
  instances: number;
  /** The incident's requests as sent, in order (the summariser's included, if any). */
  requests: ChatRequestBody[];
  /** Prompt tokens of each of the incident's requests. */
  tokens: number[];
  /** Prompt tokens of the whole incident. */
  total: number;
  /** Per request: its shared prefix with the request before it, over its own tokens (0..1). */
  cacheShares: number[];
  /** All the incident's shared prefixes over all its requests' tokens (0..1). */
  cacheShareOverall: number;
}

function requestTokens(body: ChatRequestBody): number {
  return countPrompt(body.messages as unknown as ChatMessage[], (body.tools ?? []) as unknown as ChatTool[]);
}

/** A request as one token sequence: the tool schemas, then each message (role, content, calls) in order. */
export function requestSequence(body: ChatRequestBody): Uint32Array {
  const text = [
    JSON.stringify(body.tools ?? []),
    ...body.messages.map(
      (m) => `<|${m.role}|>${m.tool_call_id ?? ""}\n${m.content ?? ""}${m.tool_calls ? JSON.stringify(m.tool_calls) : ""}<|end|>`,
    ),
  ].join("\n");
  return Uint32Array.from(encode(text, { disallowedSpecial: new Set<string>() }));
}

/** Tokens `b` shares with `a` from the start. */
export function commonPrefix(a: Uint32Array, b: Uint32Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export async function freshFleetIncident(count: number, options: { withoutFirstSightings?: boolean } = {}): Promise<FreshFleetIncident> {
  const llm = await new ScriptedLlm().start();
  try {
    const { deps } = await agentFixture({ llm, instances: count, vars: { DEBOUNCE_STATE_MS: "1000", WAKE_MIN_DELAY_S: "60" } });
    // The fixture mirrors the simulated fleet in fleetwarden's view; this fleet has never been
    // listed, so its first reconciliation finds every instance new.
    await deps.db.delete(instances).where(eq(instances.agentId, "default"));
    const report = await reconcileFleet(deps, "default");
    if (report.changed.length !== count) throw new Error(`the first reconciliation recorded ${report.changed.length} of ${count}`);
    // The agent's run on the first sightings: nothing to do.
    llm.push({ text: `${count} instances listed, all running; nothing to do.` });
    await runPipeline(deps);
    if (options.withoutFirstSightings) {
      await deps.db.delete(instanceEvents).where(and(eq(instanceEvents.agentId, "default"), isNull(instanceEvents.fromState)));
    }
    deps.clock.advance(5 * 60_000);
    const id = INCIDENT_INSTANCE;
    llm.push(
      { tools: [{ name: "get_instance_logs", arguments: { instance_id: id, tail_lines: 100 } }] },
      { tools: [{ name: "start_instance", arguments: { instance_id: id, reason: "exited with an out-of-memory error; one restart" } }] },
      {
        tools: [
          {
            name: "schedule_next_check",
            arguments: { in_seconds: 120, reason: `confirm ${id} is running after the restart`, instance_id: id, expect_state: "running" },
          },
        ],
      },
      { text: `${id} ran out of GPU memory and exited; I restarted it and will check again in 2 minutes.` },
      { text: `${id} is running again after the restart.` },
    );
    const before = llm.requests.length;
    if (before < 1) throw new Error("the first sightings woke no run");
    await injectSimulatorFailure(deps, id, "oom");
    await runPipeline(deps);
    deps.clock.advance(121_000);
    await deliverDue(deps);
    await runPipeline(deps);
    const requests = llm.requests.slice(before);
    if (requests.filter((r) => r.tools).length !== 5 || llm.pending !== 0)
      throw new Error(`the incident made ${requests.length} LLM calls, not 5 (the script and the agent disagree)`);
    const sequences = llm.requests.slice(before - 1).map(requestSequence);
    const shared = sequences.slice(1).map((seq, i) => commonPrefix(sequences[i]!, seq));
    const cacheShares = shared.map((n, i) => n / sequences[i + 1]!.length);
    const cacheShareOverall = shared.reduce((a, b) => a + b, 0) / sequences.slice(1).reduce((a, s) => a + s.length, 0);
    const tokens = requests.map(requestTokens);
    return { instances: count, requests, tokens, total: tokens.reduce((a, b) => a + b, 0), cacheShares, cacheShareOverall };
  } finally {
    await llm.close();
  }
}
