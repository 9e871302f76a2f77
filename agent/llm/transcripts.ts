/**
 * The transcript of a run's LLM calls (llm_calls): what each call sent (messages, tools) and what
 * came back (the completion, or {error}), so a human can read why the agent decided as it did and
 * a run can be replayed against another model (agent/llm/replay.ts). Written by agent/llm/llm-call.ts,
 * one INSERT per call (not fenced: a record of what the run was told, never an effect; see
 * there); pruned after LLM_TRANSCRIPT_DAYS by the retention pass (pipeline/retention.ts).
 */
import { and, asc, eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { AgentDeps } from "../deps.ts";
import type { ChatCompletion, ChatMessage, ChatTool } from "./chat-model.ts";
import type { RunFence } from "../../pipeline/index.ts";
import { llmCalls } from "../../schema/index.ts";

export type LlmCallPurpose = "chat" | "summary";

export interface LlmRequestRecord {
  messages: readonly ChatMessage[];
  tools: readonly ChatTool[];
}

export interface RecordedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Keeps one call of the run; `alongside` (the run's lease renewal) goes in the same batch, one
 * round trip for both, and its rows are returned. The insert commits whatever `alongside` finds.
 */
export async function recordLlmCall<R>(
  deps: Pick<AgentDeps, "db" | "clock">,
  run: Pick<RunFence, "agentId" | "runId">,
  call: { seq: number; purpose: LlmCallPurpose; model: string; request: LlmRequestRecord; response: unknown },
  alongside?: BatchItem<"sqlite"> & PromiseLike<R>,
): Promise<R | undefined> {
  const insert = deps.db.insert(llmCalls).values({ agentId: run.agentId, runId: run.runId, ...call, createdAt: deps.clock.now() });
  if (!alongside) {
    await insert;
    return undefined;
  }
  const [, rows] = await deps.db.batch([insert, alongside]);
  return rows as R;
}

/** A run's calls in the order it made them. */
export async function listLlmCalls(deps: Pick<AgentDeps, "db">, agentId: string, runId: number) {
  const rows = await deps.db
    .select()
    .from(llmCalls)
    .where(and(eq(llmCalls.agentId, agentId), eq(llmCalls.runId, runId)))
    .orderBy(asc(llmCalls.seq));
  return rows.map((r) => {
    const request = r.request as LlmRequestRecord;
    return {
      seq: r.seq,
      purpose: r.purpose as LlmCallPurpose,
      model: r.model,
      createdAt: r.createdAt,
      request,
      response: r.response,
      ...answerOf(r.response),
    };
  });
}

export type LlmCallView = Awaited<ReturnType<typeof listLlmCalls>>[number];

/** What a recorded response said: its tool calls and text, or the error it was. */
export function answerOf(response: unknown): { toolCalls: RecordedToolCall[]; reply: string | null; error: string | null } {
  const error = (response as { error?: unknown } | null)?.error;
  if (typeof error === "string") return { toolCalls: [], reply: null, error };
  const message = (response as ChatCompletion | null)?.choices?.[0]?.message;
  return {
    toolCalls: (message?.tool_calls ?? []).flatMap((c) =>
      c.type === "function" ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
    ),
    reply: message?.content ?? null,
    error: null,
  };
}
