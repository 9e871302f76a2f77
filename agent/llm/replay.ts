/**
 * Replay: a recorded run's first chat request sent again, to the same or another model, with the
 * tool loop played without side effects — a tool call that matches one the run made (same name,
 * same arguments as normalised JSON) gets the result the run got, any other gets "not executed in
 * a replay". No tool runs, so no provider call, action, notification, wake, memory write or run
 * happens; nothing is kept of the replay's calls but its one `replays` row. Bounded like a run:
 * at most AGENT_MAX_ITERATIONS calls, each within the LLM's timeout.
 */
import { and, desc, eq } from "drizzle-orm";
import type { AgentDeps } from "../deps.ts";
import type { ChatMessage, ChatModel } from "./chat-model.ts";
import { withStorableArguments } from "./tool-call-args.ts";
import { answerOf, listLlmCalls, type LlmCallView, type RecordedToolCall } from "./transcripts.ts";
import { replays } from "../../schema/index.ts";
import { RequestError } from "../../runtime/errors.ts";

export const NOT_EXECUTED = "not executed in a replay";

export interface PlayedCall {
  name: string;
  arguments: string;
}

export interface ReplaySide {
  toolCalls: PlayedCall[];
  reply: string | null;
}

export interface ReplayResult {
  model: string;
  original: ReplaySide;
  replay: ReplaySide;
  same: boolean;
  differences: string[];
}

/** Arguments as JSON with sorted keys, so `{"a":1,"b":2}` and `{ "b": 2, "a": 1 }` match. */
export function normaliseArguments(raw: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(raw)));
  } catch {
    return raw.trim();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
  );
}

const callKey = (name: string, args: string) => `${name} ${normaliseArguments(args)}`;
const played = (c: RecordedToolCall | PlayedCall): PlayedCall => ({ name: c.name, arguments: normaliseArguments(c.arguments) });

/**
 * Each tool call the run itself made (by name and arguments) with the result it got, read from
 * the tool messages of its later requests. Calls of earlier runs (in the history the requests
 * carry) are not the run's: their ids are not among its answers' calls (run-agent.ts names a call
 * without an id `call_<iteration>_<index>`).
 */
function recordedResults(calls: readonly LlmCallView[]): Map<string, string> {
  const own = new Map<string, string>();
  calls.forEach((call, k) => call.toolCalls.forEach((tc, i) => own.set(tc.id || `call_${k + 1}_${i}`, callKey(tc.name, tc.arguments))));
  const results = new Map<string, string>();
  for (const call of calls) {
    for (const m of call.request.messages) {
      const key = m.role === "tool" ? own.get(m.tool_call_id) : undefined;
      if (key && typeof m.content === "string" && !results.has(key)) results.set(key, m.content);
    }
  }
  return results;
}

function compare(original: ReplaySide, replay: ReplaySide): string[] {
  const differences: string[] = [];
  const show = (c: PlayedCall | undefined) => (c ? `${c.name} ${c.arguments}` : "nothing");
  for (let i = 0; i < Math.max(original.toolCalls.length, replay.toolCalls.length); i++) {
    const a = original.toolCalls[i];
    const b = replay.toolCalls[i];
    if (a?.name !== b?.name || a?.arguments !== b?.arguments)
      differences.push(`tool call ${i + 1}: the run made ${show(a)}, the replay ${show(b)}`);
  }
  if (original.reply !== replay.reply)
    differences.push(`reply: the run answered ${JSON.stringify(original.reply)}, the replay ${JSON.stringify(replay.reply)}`);
  return differences;
}

/**
 * Replays run `runId` against `model` (the agent's configured model when absent) and records the
 * result with the operator's name. 409 for a run without recorded chat calls, 503 without an LLM;
 * the caller answers 404 for an unknown run.
 */
export async function replayRun(
  deps: Pick<AgentDeps, "db" | "clock" | "config" | "llm">,
  agentId: string,
  runId: number,
  options: { model?: string | undefined; operator: string },
): Promise<ReplayResult> {
  if (!deps.llm) throw new RequestError(503, "no LLM is configured (set OPENAI_API_KEY): there is no model to replay against");
  const chats = (await listLlmCalls(deps, agentId, runId)).filter((c) => c.purpose === "chat");
  const first = chats[0];
  if (!first) {
    throw new RequestError(
      409,
      `run ${runId} has no recorded LLM calls (the rules policy decided, it ran before calls were kept, or its calls were pruned after LLM_TRANSCRIPT_DAYS=${deps.config.llmTranscriptDays})`,
    );
  }
  const model = modelFor(deps.llm, options.model);
  const original: ReplaySide = {
    toolCalls: chats.flatMap((c) => c.toolCalls.map(played)),
    reply: [...chats].reverse().find((c) => c.toolCalls.length === 0 && c.error === null)?.reply ?? null,
  };
  const replay = await playToolLoop(model, first, recordedResults(chats), deps.config.agentMaxIterations);
  const differences = compare(original, replay);
  const result: ReplayResult = { model: model.model, original, replay, same: differences.length === 0, differences };
  await deps.db
    .insert(replays)
    .values({ agentId, runId, model: model.model, operator: options.operator, result, createdAt: deps.clock.now() });
  return result;
}

function modelFor(llm: ChatModel, wanted: string | undefined): ChatModel {
  if (!wanted || wanted === llm.model) return llm;
  if (!llm.withModel) throw new RequestError(409, `the configured LLM serves only ${llm.model}; it cannot replay against ${wanted}`);
  return llm.withModel(wanted);
}

async function playToolLoop(
  model: ChatModel,
  first: LlmCallView,
  recorded: Map<string, string>,
  maxIterations: number,
): Promise<ReplaySide> {
  const messages: ChatMessage[] = [...first.request.messages];
  const side: ReplaySide = { toolCalls: [], reply: null };
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    let completion;
    try {
      completion = await model.complete({ messages, ...(first.request.tools.length ? { tools: [...first.request.tools] } : {}) });
    } catch (err) {
      throw new RequestError(503, `the model ${model.model} failed during the replay: ${err instanceof Error ? err.message : String(err)}`);
    }
    const answer = answerOf(completion);
    if (answer.toolCalls.length === 0) {
      side.reply = answer.reply;
      return side;
    }
    const calls = answer.toolCalls.map((c, i) => ({ ...c, id: c.id || `replay_${iteration}_${i}` }));
    messages.push({
      role: "assistant",
      content: answer.reply,
      tool_calls: calls.map((c) =>
        withStorableArguments({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }),
      ),
    });
    for (const call of calls) {
      side.toolCalls.push(played(call));
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: recorded.get(callKey(call.name, call.arguments)) ?? JSON.stringify({ error: NOT_EXECUTED }),
      });
    }
  }
  return side;
}

/** The newest replay of a run, for its page. */
export async function lastReplay(deps: Pick<AgentDeps, "db">, agentId: string, runId: number) {
  const [row] = await deps.db
    .select()
    .from(replays)
    .where(and(eq(replays.agentId, agentId), eq(replays.runId, runId)))
    .orderBy(desc(replays.id))
    .limit(1);
  return row ? { model: row.model, operator: row.operator, createdAt: row.createdAt, result: row.result as ReplayResult } : null;
}
